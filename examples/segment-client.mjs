// A Segment source pointed at guidegate: the official @segment/analytics-node client, unmodified.
//   GUIDEGATE_URL=http://localhost:4000 WRITE_KEY=ggk_... node examples/segment-client.mjs
// Make the write key with: npm run cli -- key create <email> --scope ingest --account <accountId>
import { Analytics } from "@segment/analytics-node";

const analytics = new Analytics({
  writeKey: process.env.WRITE_KEY,
  host: process.env.GUIDEGATE_URL ?? "http://localhost:4000",
  path: "/segment/v1/batch",
  flushAt: 20,
});
analytics.on("error", (err) => console.error("segment error:", err));

// identify: traits named like the account's end-user fields are stored (the rest are counted as ignored).
analytics.identify({ userId: "user-42", traits: { name: "Ada Lovelace", email: "ada@example.com" } });
// track: "Flow Started" names the engagement event flow_started; the page URL gives the domain.
const context = { page: { url: "https://app.example.com/invoices" } };
analytics.track({ userId: "user-42", event: "Flow Started", properties: { flowId: "c_flow1", widget: "self_help" }, context });
analytics.track({ userId: "user-42", event: "Flow Completed", properties: { flow_id: "c_flow1", widget: "self_help" }, context });
// Any other name is a user_action whose actionId is the name.
analytics.track({ userId: "user-42", event: "Exported Report", properties: { format: "csv" } });

await analytics.closeAndFlush({ timeout: 10_000 });
console.log("sent; see GET /v1/accounts/<accountId>/reports/flowCompletion?flowId=c_flow1");
