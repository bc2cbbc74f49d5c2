// What the end-user route tests (test/rest-endusers/*.test.ts) share: the server, two cookie accounts,
// URL prefixes of both path styles, calls by method, and an account with custom fields.
import { afterAll, beforeAll, expect } from "vitest";
import { call, pathA, pathB, type Server, startServer, type Tenant, tenant } from "../helpers.js";

export let server: Server;
export let a: Tenant; // cookie account (the default identification method)
export let b: Tenant; // another cookie account, for isolation

/** Starts a server and makes the two accounts before the file's tests; closes the server after them. */
export function withServer(): void {
  beforeAll(async () => {
    server = await startServer();
    a = await tenant("eua");
    b = await tenant("eub");
  });
  afterAll(() => server.close());
}

export const A = (t: Tenant) => server.url + pathA(t);
export const B = (t: Tenant) => server.url + pathB(t);
export const put = (url: string, t: Tenant, body: unknown) => call(url, { method: "PUT", headers: t.headers, body });
export const post = (url: string, t: Tenant, body: unknown) => call(url, { method: "POST", headers: t.headers, body });
export const del = (url: string, t: Tenant) => call(url, { method: "DELETE", headers: t.headers });
export const get = (url: string, t: Tenant) => call(url, { headers: t.headers });
export const rawPut = (url: string, t: Tenant, raw: string, method = "PUT") =>
  call(url, { method, headers: { ...t.headers, "content-type": "application/json" }, raw });

/** Fields the tests below write to; `fresh` accounts get their own. */
export const FIELDS = [
  { name: "plan", type: "string", description: "Plan name" },
  { name: "score", type: "double" },
  { name: "active", type: "boolean" },
  { name: "seenAt", type: "timestamp" },
  { name: "ssn", type: "encrypted_string" },
];
export async function withFields(t: Tenant, fields: object[] = FIELDS) {
  const r = await put(`${A(t)}/endUserSchema`, t, fields);
  expect(r.status, r.text).toBe(200);
}
export async function fresh(prefix: string, opts: { idMethod?: string } = {}) {
  const t = await tenant(prefix, opts);
  await withFields(t);
  return t;
}

export const DEFAULT_NAMES = ["email", "name", "role", "locale", "signupTime"];
export const tables = (sql: string[]) => ({
  actions: sql.some((q) => /[`"]EndUserAction[`"]/.test(q)),
  values: sql.some((q) => /[`"]EndUserValue[`"]/.test(q)),
});
