// A webhook receiver that verifies guidegate's Standard Webhooks signatures with the
// `standardwebhooks` library and drops repeats by webhook-id (deliveries are at least once).
//   WEBHOOK_SECRET=whsec_... PORT=8080 node examples/webhook-receiver.mjs
// Register it (the service calls https public addresses only, unless WEBHOOKS_ALLOW_PRIVATE=true):
//   curl -X POST http://localhost:4000/v1/accounts/demo/webhooks -H 'content-type: application/json' \
//     -H "x-service-integration-key: $KEY" -H 'x-service-user: admin@example.com' \
//     -d '{"url":"https://hooks.example.com/guidegate","events":["engagement.flow_completed","content.created"]}'
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const verifier = new Webhook(process.env.WEBHOOK_SECRET);
const seen = new Set(); // a real receiver keeps these in its database, for longer than the retry schedule (about a day)

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let message;
    try {
      // Checks the HMAC over "<webhook-id>.<webhook-timestamp>.<body>" and that the timestamp is recent.
      message = verifier.verify(body, req.headers);
    } catch (err) {
      res.writeHead(400).end(`bad signature: ${err.message}`);
      return;
    }
    const id = req.headers["webhook-id"];
    if (!seen.has(id)) {
      seen.add(id);
      console.log(message.type, JSON.stringify(message.data));
    }
    // Answer 2xx within 5 s; anything else is retried with backoff.
    res.writeHead(204).end();
  });
});
server.listen(Number(process.env.PORT ?? 8080), () => console.log(`listening on :${server.address().port}`));
