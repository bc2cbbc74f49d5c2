// Explore against the contract's "Explore" section, rule by rule, where the other Explore tests left
// a gap: what GET /openapi.json says the three routes answer (test/explore-cost.test.ts gets a real
// 422 of a question past EXPLORE_TIMEOUT_MS on each database), and CSV cell by cell against JSON.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

let server: Server;
let t: Tenant;
const req = requester(() => server);
const T = Date.UTC(2026, 4, 4, 10);

beforeAll(async () => {
  server = await startServer();
  t = await tenant("explore-audit");
  const schema = await req(`/api/v1/${t.accountId}/endUserSchema`, { method: "PUT", headers: t.headers, body: [{ name: "plan", type: "string" }] });
  expect(schema.status, schema.text).toBeLessThan(300);
  const users = await req(`/api/v1/${t.accountId}/endUsers`, {
    method: "PUT",
    headers: t.headers,
    body: [
      { id: "a", custom: { plan: '=HYPERLINK("x"),\n"gold"' } },
      { id: "b", custom: { plan: "-5" } },
    ],
  });
  expect(users.status, users.text).toBeLessThan(300);
  const ev = (endUserId: string, dt: number, useful: boolean, flowId: string) => ({ type: "flow_feedback", time: T + dt, endUserId, flowId, useful });
  const events = [ev("a", 0, true, "f,1"), ev("a", 1, false, 'f"2'), ev("b", 2, true, "f,1"), ev("c", 3, false, "@f3")];
  const posted = await req(`/v1/accounts/${t.accountId}/events`, { method: "POST", headers: t.headers, body: events });
  expect(posted.status, posted.text).toBe(202);
});

afterAll(async () => {
  await server?.close();
});

describe("Explore in GET /openapi.json", () => {
  it("documents the 422 problem each question answers past EXPLORE_TIMEOUT_MS", async () => {
    const doc = (await req("/openapi.json")).body;
    for (const name of ["query", "funnel", "retention"]) {
      const response = doc.paths[`/v1/accounts/{accountId}/analytics/${name}`].post.responses[422];
      expect(response, `${name}: 422 documented`).toBeDefined();
      expect(response.description).toMatch(/EXPLORE_TIMEOUT_MS.*narrow it/);
      expect(response.content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
      expect(response.content["application/problem+json"].example).toMatchObject({ type: "about:blank", title: "Unprocessable Entity", status: 422 });
    }
  });
});

/** RFC 4180 records (quoted fields with doubled quotes, CRLF between records). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (!quoted && ch === ",") {
      record.push(field);
      field = "";
    } else if (!quoted && ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i++;
    } else {
      field += ch;
    }
  }
  return records;
}

describe("format=csv", () => {
  it("holds the JSON's columns and rows, every cell as JSON has it: nulls empty, booleans as words, formula-leading text neutralised", async () => {
    const body = {
      metrics: ["events", "users", "avg:step"],
      dimensions: ["user:plan", "event:flowId", "event:useful"],
      startDate: "2026-05-04",
      endDate: "2026-05-04",
    };
    const url = `/v1/accounts/${t.accountId}/analytics/query`;
    const json = await req(url, { method: "POST", headers: t.headers, body });
    expect(json.status, json.text).toBe(200);
    expect(json.body.rows.length).toBe(4);
    const csv = await req(`${url}?format=csv`, { method: "POST", headers: t.headers, body: { ...body, limit: 1 } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="explore_query.csv"');
    expect(csv.text.endsWith("\r\n")).toBe(true);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual(json.body.columns);
    // Every row (limit does not apply), in the same order; each cell as the JSON's.
    const asCell = (v: unknown) => (v === null ? "" : typeof v === "string" && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v));
    expect(rows).toEqual(json.body.rows.map((r: unknown[]) => r.map(asCell)));
    expect(rows.flat()).toContain(`'=HYPERLINK("x"),\n"gold"`);
    expect(rows.flat()).toContain("'-5");
    expect(rows.flat()).toContain("'@f3");
  });
});
