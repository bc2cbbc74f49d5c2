// `seed --demo` on a fresh database: the demo account's engagement history makes every report
// non-empty in its default window (the last 30 days). A seed interrupted half way (a first start
// killed while seeding) is finished by the next one without doubling anything; a finished demo
// account is not seeded again. Progress without a terminal: a line every 10 % or 2 s.
import { afterAll, beforeAll, expect, it } from "vitest";
import { requestScope } from "../src/audit/requestScope.js";
import { REPORTS } from "../src/domains/reports/registry.js";
import { DEMO_ACCOUNT, DEMO_EMAIL, demoSeedUnfinished, SEEDING_NAME, seedDemo } from "../src/seed/demo.js";
import { consoleProgress } from "../src/seed/progress.js";
import { DEMO_SEGMENT } from "../src/seed/segments.js";
import { call, prisma, type Server, startServer } from "./helpers.js";

let server: Server;
let key: string;
const steps = new Map<string, number>();
const counts = async () => ({
  contents: await prisma.content.count({ where: { accountId: DEMO_ACCOUNT } }),
  events: await prisma.event.count({ where: { accountId: DEMO_ACCOUNT } }),
  tags: await prisma.tag.count({ where: { accountId: DEMO_ACCOUNT } }),
  segments: await prisma.segment.count({ where: { accountId: DEMO_ACCOUNT } }),
  keys: await prisma.apiKey.count({ where: { user: { email: DEMO_EMAIL } } }),
});
let interrupted: Awaited<ReturnType<typeof counts>> & { name?: string; unfinished: boolean; error: string };
const asSeed = <T>(fn: () => Promise<T>) => requestScope.run({ requestId: null, ip: null, actor: "system:seed" }, fn);
beforeAll(async () => {
  server = await startServer();
  // The first seed stops in the middle of its events (as a process killed there would).
  const error = await asSeed(() =>
    seedDemo({
      progress: (step) => {
        if (step === "events") throw new Error("killed");
      },
    }),
  ).then(
    () => "",
    (err: Error) => err.message,
  );
  interrupted = {
    ...(await counts()),
    name: (await prisma.account.findUnique({ where: { id: DEMO_ACCOUNT } }))?.name,
    unfinished: await demoSeedUnfinished(),
    error,
  };
  // The next seed (the next start, or `seed --demo`) finishes it.
  ({ key } = await asSeed(() => seedDemo({ progress: (step, done, total) => steps.set(step, done / total) })));
}, 180_000);
afterAll(() => server.close());

it("an interrupted seed leaves whole steps only, marked unfinished; the next one finishes it without doubling", async () => {
  expect(interrupted).toEqual({ contents: 203, events: 0, tags: 20, segments: 0, keys: 0, name: SEEDING_NAME, unfinished: true, error: "killed" });
  const done = await counts();
  expect(done).toMatchObject({ contents: 203, tags: 20, segments: 1, keys: 1 });
  expect(done.events).toBeGreaterThan(15_000);
  expect((await prisma.account.findUnique({ where: { id: DEMO_ACCOUNT } }))?.name).toBe("Demo account");
  expect(await demoSeedUnfinished()).toBe(false);
  // the flows' one review each, not two
  const reviewed = await prisma.content.findMany({
    where: { accountId: DEMO_ACCOUNT, description: { endsWith: "(reviewed)" } },
    select: { description: true },
  });
  expect(reviewed).toHaveLength(8);
  for (const r of reviewed) expect(r.description).not.toMatch(/\(reviewed\).*\(reviewed\)/);
});

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

it("seeds once: seeding a finished demo account again is refused and adds nothing", async () => {
  const before = await counts();
  await expect(asSeed(() => seedDemo({ contents: 3 }))).rejects.toThrow(/the demo account 'demo' exists/);
  expect(await counts()).toEqual(before);
});

it("progress without a terminal: a line at each step's start, every further 10 %, every 2 s, and at its end", () => {
  const lines: string[] = [];
  let now = 0;
  const progress = consoleProgress({ isTTY: false, write: (l: string) => lines.push(l) > 0 }, 2_000, () => now);
  // The events step: 4 batches of 5,000 (29 %, 58 %, 87 %, 100 %): a line each (only the last one before).
  for (const done of [5_000, 10_000, 15_000, 17_200]) progress("events", done, 17_200);
  expect(lines).toEqual([
    "seed: events 5000/17200 (29%)\n",
    "seed: events 10000/17200 (58%)\n",
    "seed: events 15000/17200 (87%)\n",
    "seed: events 17200/17200 (100%)\n",
  ]);
  lines.length = 0;
  // Fine-grained steps: at most one line per 10 %, unless 2 s have passed.
  for (let done = 1; done <= 100; done++) progress("content", done, 100);
  expect(lines).toHaveLength(11); // 1 %, 10 %, 20 %, ... 100 %
  lines.length = 0;
  progress("slow", 1, 1000);
  progress("slow", 2, 1000);
  now += 2_000;
  progress("slow", 3, 1000);
  expect(lines).toEqual(["seed: slow 1/1000 (0%)\n", "seed: slow 3/1000 (0%)\n"]);
});
