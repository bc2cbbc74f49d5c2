// `seed --demo` on a fresh database: the demo account's engagement history makes every report
// non-empty in its default window (the last 30 days), and seeding again adds no events.
import { afterAll, beforeAll, expect, it } from "vitest";
import { requestScope } from "../src/audit/requestScope.js";
import { REPORTS } from "../src/domains/reports/registry.js";
import { DEMO_ACCOUNT, DEMO_EMAIL, seedDemo } from "../src/seed/demo.js";
import { DEMO_SEGMENT } from "../src/seed/segments.js";
import { call, prisma, type Server, startServer } from "./helpers.js";

let server: Server;
let key: string;
const steps = new Map<string, number>();
beforeAll(async () => {
  server = await startServer();
  ({ key } = await requestScope.run({ requestId: null, ip: null, actor: "system:seed" }, () =>
    seedDemo({ progress: (step, done, total) => steps.set(step, done / total) }),
  ));
}, 120_000);
afterAll(() => server.close());

it("reports progress of every step to the end", () => {
  expect(Object.fromEntries(steps)).toEqual({ tags: 1, content: 1, events: 1 });
});

it("gives every report rows in its default window (flow reports: the first demo flow)", async () => {
  const events = await prisma.event.count({ where: { accountId: DEMO_ACCOUNT } });
  expect(events).toBeGreaterThan(15_000);
  const domains = await prisma.event.groupBy({ by: ["domain"], where: { accountId: DEMO_ACCOUNT }, _count: true });
  expect(domains.length).toBeGreaterThanOrEqual(4); // three domains and none
  const flowId = (await prisma.event.findFirstOrThrow({ where: { accountId: DEMO_ACCOUNT, type: "flow_started" }, orderBy: { id: "asc" } })).flowId!;
  const headers = { "x-service-integration-key": key, "x-service-user": DEMO_EMAIL };
  const empty: string[] = [];
  for (const def of REPORTS) {
    const r = await call(`${server.url}/v1/accounts/${DEMO_ACCOUNT}/reports/${def.name}?flowId=${flowId}`, { headers });
    expect(r.status, `${def.name}: ${r.text.slice(0, 200)}`).toBe(200);
    if (!r.body.rows.length || (def.name === "summary" && r.body.rows[0].some((n: number) => n === 0))) empty.push(def.name);
  }
  expect(empty).toEqual([]);
});

it("gives the demo integration attributes and a segment whose content order answers (B16, B22)", async () => {
  const headers = { "x-service-integration-key": key, "x-service-user": DEMO_EMAIL };
  const base = `${server.url}/v1/accounts/${DEMO_ACCOUNT}`;
  const found = await call(`${base}/integrationAttributes/search`, { method: "POST", headers, body: { region: "emea" } });
  expect(found.body.data.map((r: { attributeValue: string }) => r.attributeValue).sort()).toEqual(["acme", "initech"]);
  const segment = await prisma.segment.findFirstOrThrow({ where: { accountId: DEMO_ACCOUNT, name: DEMO_SEGMENT } });
  // A gold user of an EMEA company matches; a silver one does not.
  const values = await prisma.endUserValue.findMany({ where: { accountId: DEMO_ACCOUNT, field: { in: ["company", "plan"] } }, include: { endUser: true } });
  const byUser = new Map<string, Record<string, string>>();
  for (const v of values) byUser.set(v.endUser.externalId, { ...byUser.get(v.endUser.externalId), [v.field]: v.text! });
  const gold = [...byUser].find(([, v]) => v.plan === "gold" && ["acme", "initech"].includes(v.company!))![0];
  const silver = [...byUser].find(([, v]) => v.plan === "silver")![0];
  const order = (id: string) => call(`${base}/segments/${segment.id}/contentOrder?id=${encodeURIComponent(id)}`, { headers });
  const matched = await order(gold);
  expect(matched.status, matched.text).toBe(200);
  expect(matched.body.data).toHaveLength(5);
  expect((await order(silver)).body).toEqual({ data: [] });
});

it("seeds the events once: seeding again adds none", async () => {
  const before = await prisma.event.count({ where: { accountId: DEMO_ACCOUNT } });
  await requestScope.run({ requestId: null, ip: null, actor: "system:seed" }, () => seedDemo({ contents: 3 }));
  expect(await prisma.event.count({ where: { accountId: DEMO_ACCOUNT } })).toBe(before);
});
