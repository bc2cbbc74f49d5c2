// A segment's rule is decided in three places: the evaluator over one end user's values
// (src/domains/segments/rules.ts, behind `matches` and B16's content order), the same after the
// one-statement read of a segment with one user's values (src/domains/segments/read.ts), and SQL over
// every end user at once (Explore's `inSegment`, src/domains/explore/sql.ts). Random rules over random
// values of every field type (defaults included, text with case, accents, LIKE's wildcards and the
// empty string; fractional and negative numbers; timestamps to the millisecond) must give the same
// members in all three, and the members an evaluation written here from the rule language's words
// gives. TEST_SEED draws other rules and values.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seeded } from "../src/seed/random.js";
import { gql, requester, type Server, startServer, type Tenant, tenant, testSeed } from "./helpers.js";

let server: Server;
let t: Tenant;
const req = requester(() => server);

type Kind = "string" | "double" | "boolean" | "timestamp";
const FIELDS: { name: string; kind: Kind; custom: boolean }[] = [
  { name: "plan", kind: "string", custom: true },
  { name: "seats", kind: "double", custom: true },
  { name: "beta", kind: "boolean", custom: true },
  { name: "renewal", kind: "timestamp", custom: true },
  { name: "locale", kind: "string", custom: false },
  { name: "signupTime", kind: "timestamp", custom: false },
];
const POOL: Record<Kind, unknown[]> = {
  string: ["gold", "Gold", "gold ", "", "silver", "gö", "日本語", "a%b", "a_b", "ab"],
  double: [0, -1.5, 3, 5, 10, 0.1, 12.75, 1e-9],
  boolean: [true, false],
  timestamp: [Date.UTC(2025, 0, 1, 12, 30, 0, 123), Date.UTC(2025, 0, 1, 12, 30, 0, 124), Date.UTC(2026, 1, 2), Date.UTC(1999, 11, 31, 23, 59, 59, 999)],
};
/** What `contains` looks for: substrings of the pool, case and wildcards. */
const SUBSTRINGS = ["ol", "Go", "", "%", "_", "本", "ö", "a%", "x"];
const OPS: Record<Kind, string[]> = {
  string: ["eq", "ne", "in", "exists", "contains"],
  double: ["eq", "ne", "in", "exists", "gt", "gte", "lt", "lte"],
  boolean: ["eq", "ne", "in", "exists"],
  timestamp: ["eq", "ne", "in", "exists", "gt", "gte", "lt", "lte"],
};

const r = seeded(testSeed(500));
const USERS = Array.from({ length: 30 }, (_, i) => `v${i}`);
/** Each end user's values (a field absent when the user has none). */
const VALUES: Record<string, Record<string, unknown>> = Object.fromEntries(
  USERS.map((id) => [id, Object.fromEntries(FIELDS.filter(() => r.chance(0.7)).map((f) => [f.name, r.pick(POOL[f.kind])]))]),
);

type Rule = { and: Rule[] } | { or: Rule[] } | { not: Rule } | { field: string; op: string; value?: unknown };

function randomRule(depth: number): Rule {
  const k = depth < 3 ? r.int(6) : 5;
  if (k === 0) return { and: Array.from({ length: 1 + r.int(3) }, () => randomRule(depth + 1)) };
  if (k === 1) return { or: Array.from({ length: 1 + r.int(3) }, () => randomRule(depth + 1)) };
  if (k === 2) return { not: randomRule(depth + 1) };
  const f = r.pick(FIELDS);
  const op = r.pick(OPS[f.kind]);
  const field = `custom.${f.name}`;
  if (op === "exists") return { field, op };
  if (op === "in") return { field, op, value: r.sample(POOL[f.kind], 1 + r.int(3)) };
  if (op === "contains") return { field, op, value: r.pick(SUBSTRINGS) };
  return { field, op, value: r.pick(POOL[f.kind]) };
}

/** The rule language's words (docs/segments.md): a user without a value matches no comparison, matches `ne`, does not `exist`. */
function holds(rule: Rule, values: Record<string, unknown>): boolean {
  if ("and" in rule) return rule.and.every((x) => holds(x, values));
  if ("or" in rule) return rule.or.some((x) => holds(x, values));
  if ("not" in rule) return !holds(rule.not, values);
  const v = values[rule.field.slice("custom.".length)];
  if (v === undefined) return rule.op === "ne";
  switch (rule.op) {
    case "exists":
      return true;
    case "eq":
      return v === rule.value;
    case "ne":
      return v !== rule.value;
    case "in":
      return (rule.value as unknown[]).includes(v);
    case "contains":
      return (v as string).includes(rule.value as string);
    case "gt":
      return (v as number) > (rule.value as number);
    case "gte":
      return (v as number) >= (rule.value as number);
    case "lt":
      return (v as number) < (rule.value as number);
    default:
      return (v as number) <= (rule.value as number);
  }
}

const T = Date.UTC(2026, 0, 10, 12);

beforeAll(async () => {
  server = await startServer();
  t = await tenant("segrules");
  const schema = await req(`/api/v1/${t.accountId}/endUserSchema`, {
    method: "PUT",
    headers: t.headers,
    body: FIELDS.filter((f) => f.custom).map((f) => ({ name: f.name, type: f.kind })),
  });
  expect(schema.status, schema.text).toBeLessThan(300);
  const users = await req(`/api/v1/${t.accountId}/endUsers`, {
    method: "PUT",
    headers: t.headers,
    body: USERS.map((id) => ({ id, custom: VALUES[id] })),
  });
  expect(users.status, users.text).toBeLessThan(300);
  expect(users.body.data, users.text).toHaveLength(USERS.length);
  // One event each, so that Explore sees every end user.
  const events = await req(`/v1/accounts/${t.accountId}/events`, {
    method: "POST",
    headers: t.headers,
    body: USERS.map((endUserId, i) => ({ type: "user_action", actionId: "open", endUserId, time: T + i })),
  });
  expect(events.status, events.text).toBe(202);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe("segment rules: the evaluator, the one-statement read and SQL agree", () => {
  it("on random rules over random values of every field type", async () => {
    let members = 0;
    let nonMembers = 0;
    for (let i = 0; i < 40; i++) {
      const rule = randomRule(0);
      const what = JSON.stringify(rule);
      const created = await gql(server, t, `mutation($a: String!, $input: SegmentInput!) { createSegment(accountId: $a, input: $input) { id } }`, {
        a: t.accountId,
        input: { name: `rule ${i}`, rule, contentIds: [] },
      });
      expect(created.errors, what).toBeUndefined();
      const id: string = created.data.createSegment.id;
      const want = USERS.filter((u) => holds(rule, VALUES[u]!)).sort();
      members += want.length;
      nonMembers += USERS.length - want.length;

      // The evaluator, several users a request (aliases, at most 15: the separate reads).
      const byEvaluator: string[] = [];
      for (const part of [USERS.slice(0, 15), USERS.slice(15)]) {
        const aliases = part.map((u) => `${u}: matches(endUserId: "${u}")`).join(" ");
        const got = await gql(server, t, `query($a: String!, $s: String!) { account(id: $a) { segment(id: $s) { ${aliases} } } }`, { a: t.accountId, s: id });
        expect(got.errors, what).toBeUndefined();
        byEvaluator.push(...part.filter((u) => got.data.account.segment[u] === true));
      }
      expect(byEvaluator.sort(), `evaluator: ${what}`).toEqual(want);

      // One user per request: the segment and that user's values in one statement.
      for (const u of r.sample(USERS, 3)) {
        const one = await gql(server, t, `query($a: String!, $s: String!, $u: String!) { account(id: $a) { segment(id: $s) { matches(endUserId: $u) } } }`, {
          a: t.accountId,
          s: id,
          u,
        });
        expect(one.errors, what).toBeUndefined();
        expect(one.data.account.segment.matches, `one statement, ${u}: ${what}`).toBe(want.includes(u));
      }

      // SQL over every end user: Explore's inSegment.
      const asked = await req(`/v1/accounts/${t.accountId}/analytics/query`, {
        method: "POST",
        headers: t.headers,
        body: {
          metrics: ["users"],
          dimensions: ["event:endUserId"],
          filters: [["inSegment", id]],
          startDate: "2026-01-10",
          endDate: "2026-01-11",
        },
      });
      expect(asked.status, `${what}: ${asked.text}`).toBe(200);
      const bySql = (asked.body.rows as [string, number][]).map(([u]) => u).sort();
      expect(bySql, `SQL: ${what}`).toEqual(want);
    }
    // Both sides were exercised.
    expect(members).toBeGreaterThan(100);
    expect(nonMembers).toBeGreaterThan(100);
  }, 120_000);
});
