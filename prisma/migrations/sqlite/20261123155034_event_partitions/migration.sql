-- DropIndex
DROP INDEX "Event_accountId_flowId_type_time_idx";

