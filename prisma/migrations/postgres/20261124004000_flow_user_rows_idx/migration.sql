-- The flow reports that read per-user rows (flowDropOff: flow_step and flow_completed of one flow)
-- read that flow's rows alone, not every flow's rows of the window filtered by flow. Partial: only
-- these two types' rows are in it (hand-written: Prisma's schema cannot say WHERE or INCLUDE).
CREATE INDEX "EventUserRollup_flow_day_idx" ON "EventUserRollup" ("accountId", "type", "flowId", "day") INCLUDE ("endUserId", "domain", "step", "n", "lastTime") WHERE "type" IN ('flow_step', 'flow_completed');
