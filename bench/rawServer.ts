// The raw-SQL baseline of `npm run bench`, in a process of its own: Express 5 over the database
// driver (better-sqlite3 or pg), no Prisma and no GraphQL, prepared statements only. It answers
// three of guidegate's read routes with the same JSON byte for byte (the bench checks that):
//
//   GET /api/v1/:accountId/content?limit&cursor          the style A content list: the page with each
//                                                        content's tag ids aggregated in SQL (1 statement)
//   GET /v1/accounts/:accountId/endUsers/:id?fields=custom   B14: the user with its custom values,
//                                                        decoded by type, encrypted_string decrypted (1)
//   GET /v1/accounts/:accountId/segments/:segmentId/contentOrder?id=   B16: the segment's rule evaluated
//                                                        in JS from the rule JSON over the user's values and
//                                                        the linked attribute records, then the segment's
//                                                        content with tag names and a "completed" flag (3 + 1
//                                                        per linked primary attribute)
//
// Every request first checks the integration key and the account membership (1 statement).
//
//   DATABASE_URL=… ENCRYPTION_KEY=… node --import tsx bench/rawServer.ts
//
// It listens on a free port of 127.0.0.1 and prints {"port":N} on stdout.
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import express, { type Request, type Response } from "express";
import pg from "pg";
import { KEY_HEADER, USER_HEADER } from "../src/auth/identity.js";
import { KEY_PREFIX_LENGTH, keyMatches } from "../src/auth/keys.js";
import { decrypt } from "../src/crypto.js";
import { sqliteFile } from "../src/db/migrate.js";
import { type CursorOrder, cursorPosition, encodeCursor, LIST_LIMITS } from "../src/schema/pagination.js";

/** The content list's default order, as its cursors name it (src/domains/content/schema.ts). */
const CREATED: CursorOrder = { name: "CREATED", untagged: true };

// ---- rows ------------------------------------------------------------------------------------

interface ContentRow {
  id: string;
  title: string;
  type: string;
  url: string | null;
  source: string | null;
  description: string | null;
  descriptionMd: string | null;
  state: string;
  stage: string;
  parentId: string | null;
  createdAt: number;
  updatedAt: number;
  /** JSON array: tag ids (style A) or names (style B), ordered by tag name in code-point order. */
  tags: string;
  /** B16 only: the user completed it (a flow_completed or task_completed event). */
  done?: boolean;
}
interface KeyRow {
  hash: string;
  scope: string;
  expiresAt: number | null;
  revokedAt: number | null;
  email: string;
  member: boolean;
}
/** A stored custom or attribute value, typed by column (time in epoch ms). */
interface ValueRow {
  name: string;
  type: string;
  text: string | null;
  num: number | null;
  bool: boolean | null;
  time: number | null;
}
interface UserRows {
  externalId: string;
  createdAt: number;
  updatedAt: number;
  /** In field-name order (code points). */
  values: ValueRow[];
}

interface Driver {
  key(prefix: string, accountId: string): Promise<KeyRow | undefined>;
  page(accountId: string, limit: number, after: [number, string] | null): Promise<ContentRow[]>;
  /** The user and all its values; undefined when the account has no such user. */
  user(accountId: string, externalId: string): Promise<UserRows | undefined>;
  segmentRule(accountId: string, segmentId: string): Promise<string | undefined>;
  /** The secondary attributes of the record (accountId, primary, value). */
  attributes(accountId: string, primary: string, value: string): Promise<ValueRow[]>;
  /** The segment's content in position order, style B tags, and whether the user completed each. */
  segmentContent(accountId: string, segmentId: string, endUserId: string): Promise<ContentRow[]>;
  close(): Promise<void>;
}

// ---- SQLite ----------------------------------------------------------------------------------

const SQLITE_TAGS = (column: "id" | "name") =>
  `(SELECT json_group_array(${column}) FROM (SELECT t.${column} FROM ContentTag ct JOIN Tag t ON t.id = ct.tagId WHERE ct.contentId = c.id ORDER BY t.name)) AS tags`;
const SQLITE_CONTENT_COLUMNS = `c.id, c.title, c.type, c.url, c.source, c.description, c.descriptionMd, c.state, c.stage, c.parentId, c.createdAt, c.updatedAt`;
const SQLITE_PAGE = (after: boolean) => `SELECT ${SQLITE_CONTENT_COLUMNS}, ${SQLITE_TAGS("id")}
  FROM Content c WHERE c.accountId = ?${after ? " AND (c.createdAt > ? OR (c.createdAt = ? AND c.id > ?))" : ""}
  ORDER BY c.createdAt, c.id LIMIT ?`;
const SQLITE_KEY = `SELECT k.hash, k.scope, k.expiresAt, k.revokedAt, u.email,
  EXISTS (SELECT 1 FROM Membership m WHERE m.userId = u.id AND m.accountId = ?) AS member
  FROM ApiKey k JOIN User u ON u.id = k.userId WHERE k.prefix = ?`;
const SQLITE_USER = `SELECT u.externalId, u.createdAt, u.updatedAt, v.field AS name, v.type, v.text, v.num, v.bool, v.time
  FROM EndUser u LEFT JOIN EndUserValue v ON v.endUserId = u.id
  WHERE u.accountId = ? AND u.externalId = ? ORDER BY v.field`;
const SQLITE_SEGMENT = `SELECT rule FROM Segment WHERE id = ? AND accountId = ?`;
const SQLITE_ATTRIBUTES = `SELECT v.name, v.type, v.text, v.num, v.bool, v.time
  FROM AttributeRecord r JOIN AttributeRecordValue v ON v.recordId = r.id
  WHERE r.accountId = ? AND r.attributeName = ? AND r.attributeValue = ?`;
const SQLITE_SEGMENT_CONTENT = `SELECT ${SQLITE_CONTENT_COLUMNS}, ${SQLITE_TAGS("name")},
  EXISTS (SELECT 1 FROM Event e WHERE e.accountId = ? AND e.endUserId = ? AND e.flowId = c.id AND e.type IN ('flow_completed', 'task_completed')) AS done
  FROM SegmentContent sc JOIN Content c ON c.id = sc.contentId WHERE sc.segmentId = ? ORDER BY sc.position`;

function sqliteDriver(url: string): Driver {
  const db = new Database(sqliteFile(url), { readonly: true });
  const [key, first, next, user, segment, attributes, segmentContent] = [
    SQLITE_KEY,
    SQLITE_PAGE(false),
    SQLITE_PAGE(true),
    SQLITE_USER,
    SQLITE_SEGMENT,
    SQLITE_ATTRIBUTES,
    SQLITE_SEGMENT_CONTENT,
  ].map((sql) => db.prepare(sql));
  // Prisma stores SQLite DateTimes as ISO text or epoch ms: compare and return them as ms.
  const time = (v: unknown) => (v == null ? null : typeof v === "number" ? v : Date.parse(String(v)));
  const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");
  const toContent = (r: any): ContentRow => ({
    ...r,
    createdAt: time(r.createdAt),
    updatedAt: time(r.updatedAt),
    done: r.done === undefined ? undefined : !!r.done,
  });
  const toValue = (r: any): ValueRow => ({
    name: r.name,
    type: r.type,
    text: r.text,
    num: r.num,
    bool: r.bool == null ? null : !!r.bool,
    time: time(r.time),
  });
  return {
    key: async (prefix, accountId) => {
      const r = key!.get(accountId, prefix) as any;
      return r && { ...r, member: !!r.member, expiresAt: time(r.expiresAt), revokedAt: time(r.revokedAt) };
    },
    page: async (accountId, limit, after) =>
      (after ? next!.all(accountId, iso(after[0]), iso(after[0]), after[1], limit) : first!.all(accountId, limit)).map(toContent),
    user: async (accountId, externalId) => {
      const rows = user!.all(accountId, externalId) as any[];
      if (!rows.length) return undefined;
      return {
        externalId: rows[0].externalId,
        createdAt: time(rows[0].createdAt)!,
        updatedAt: time(rows[0].updatedAt)!,
        values: rows.filter((r) => r.name != null).map(toValue),
      };
    },
    segmentRule: async (accountId, segmentId) => (segment!.get(segmentId, accountId) as { rule: string } | undefined)?.rule,
    attributes: async (accountId, primary, value) => (attributes!.all(accountId, primary, value) as any[]).map(toValue),
    segmentContent: async (accountId, segmentId, endUserId) => segmentContent!.all(accountId, endUserId, segmentId).map(toContent),
    close: async () => void db.close(),
  };
}

// ---- PostgreSQL ------------------------------------------------------------------------------

// Timestamps leave the database as epoch ms (pg would read `timestamp` columns in local time).
const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::bigint`;
const PG_TAGS = (column: "id" | "name") =>
  `COALESCE((SELECT json_agg(t.${column} ORDER BY t.name COLLATE "C") FROM "ContentTag" ct JOIN "Tag" t ON t.id = ct."tagId" WHERE ct."contentId" = c.id), '[]')::text AS tags`;
const PG_CONTENT_COLUMNS = `c.id, c.title, c.type, c.url, c.source, c.description, c."descriptionMd", c.state, c.stage, c."parentId",
  ${ms('c."createdAt"')} AS "createdAt", ${ms('c."updatedAt"')} AS "updatedAt"`;
const PG_PAGE = `SELECT ${PG_CONTENT_COLUMNS}, ${PG_TAGS("id")}
  FROM "Content" c WHERE c."accountId" = $1 AND ($2::timestamp IS NULL OR c."createdAt" > $2 OR (c."createdAt" = $2 AND c.id > $3))
  ORDER BY c."createdAt", c.id LIMIT $4`;
const PG_KEY = `SELECT k.hash, k.scope, ${ms('k."expiresAt"')} AS "expiresAt", k."revokedAt" IS NOT NULL AS "revokedAt", u.email,
  EXISTS (SELECT 1 FROM "Membership" m WHERE m."userId" = u.id AND m."accountId" = $2) AS member
  FROM "ApiKey" k JOIN "User" u ON u.id = k."userId" WHERE k.prefix = $1`;
const PG_VALUE_COLUMNS = (alias: string, name: string) =>
  `${alias}.${name} AS name, ${alias}.type, ${alias}.text, ${alias}.num, ${alias}.bool, ${ms(`${alias}.time`)} AS time`;
const PG_USER = `SELECT u."externalId", ${ms('u."createdAt"')} AS "createdAt", ${ms('u."updatedAt"')} AS "updatedAt", ${PG_VALUE_COLUMNS("v", "field")}
  FROM "EndUser" u LEFT JOIN "EndUserValue" v ON v."endUserId" = u.id
  WHERE u."accountId" = $1 AND u."externalId" = $2 ORDER BY v.field COLLATE "C"`;
const PG_SEGMENT = `SELECT rule FROM "Segment" WHERE id = $1 AND "accountId" = $2`;
const PG_ATTRIBUTES = `SELECT ${PG_VALUE_COLUMNS("v", "name")}
  FROM "AttributeRecord" r JOIN "AttributeRecordValue" v ON v."recordId" = r.id
  WHERE r."accountId" = $1 AND r."attributeName" = $2 AND r."attributeValue" = $3`;
const PG_SEGMENT_CONTENT = `SELECT ${PG_CONTENT_COLUMNS}, ${PG_TAGS("name")},
  EXISTS (SELECT 1 FROM "Event" e WHERE e."accountId" = $1 AND e."endUserId" = $2 AND e."flowId" = c.id AND e.type IN ('flow_completed', 'task_completed')) AS done
  FROM "SegmentContent" sc JOIN "Content" c ON c.id = sc."contentId" WHERE sc."segmentId" = $3 ORDER BY sc.position`;

/** Every PostgreSQL statement, by name (exported for checks of their syntax). */
export const PG_STATEMENTS = {
  key: PG_KEY,
  page: PG_PAGE,
  user: PG_USER,
  segment: PG_SEGMENT,
  attributes: PG_ATTRIBUTES,
  segmentContent: PG_SEGMENT_CONTENT,
};

function postgresDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const stamp = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
  const query = async (name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as any[];
  const num = (v: unknown) => (v == null ? null : Number(v));
  const toContent = (r: any): ContentRow => ({ ...r, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt) });
  const toValue = (r: any): ValueRow => ({ name: r.name, type: r.type, text: r.text, num: r.num, bool: r.bool, time: num(r.time) });
  return {
    key: async (prefix, accountId) => {
      const r = (await query("key", PG_KEY, [prefix, accountId]))[0];
      return r && { ...r, expiresAt: num(r.expiresAt), revokedAt: r.revokedAt ? 1 : null };
    },
    page: async (accountId, limit, after) =>
      (await query("page", PG_PAGE, [accountId, after ? stamp(after[0]) : null, after?.[1] ?? null, limit])).map(toContent),
    user: async (accountId, externalId) => {
      const rows = await query("user", PG_USER, [accountId, externalId]);
      if (!rows.length) return undefined;
      return {
        externalId: rows[0].externalId,
        createdAt: Number(rows[0].createdAt),
        updatedAt: Number(rows[0].updatedAt),
        values: rows.filter((r) => r.name != null).map(toValue),
      };
    },
    segmentRule: async (accountId, segmentId) => (await query("segment", PG_SEGMENT, [segmentId, accountId]))[0]?.rule,
    attributes: async (accountId, primary, value) => (await query("attributes", PG_ATTRIBUTES, [accountId, primary, value])).map(toValue),
    segmentContent: async (accountId, segmentId, endUserId) =>
      (await query("segmentContent", PG_SEGMENT_CONTENT, [accountId, endUserId, segmentId])).map(toContent),
    close: () => pool.end(),
  };
}

// ---- values and rules --------------------------------------------------------------------------

/** A stored value as the API returns it (src/domains/endUsers/fields.ts decodeValue). */
function decode(v: ValueRow): unknown {
  switch (v.type) {
    case "string":
      return v.text;
    case "encrypted_string":
      return v.text == null ? null : decrypt(v.text);
    case "double":
      return v.num;
    case "boolean":
      return v.bool;
    case "timestamp":
      return v.time;
    default:
      throw new Error(`unknown value type ${v.type}`);
  }
}

type Rule = { and: Rule[] } | { or: Rule[] } | { not: Rule } | { field: string; op: string; value?: unknown };

/** The paths a rule reads (src/domains/segments/rules.ts fieldsOf). */
function pathsOf(rule: Rule): string[] {
  if ("and" in rule) return rule.and.flatMap(pathsOf);
  if ("or" in rule) return rule.or.flatMap(pathsOf);
  if ("not" in rule) return pathsOf(rule.not);
  return [rule.field];
}

/** The semantics of src/domains/segments/rules.ts evaluate: no value matches no comparison, matches `ne`, does not `exist`. */
function evaluate(rule: Rule, read: (path: string) => unknown): boolean {
  if ("and" in rule) return rule.and.every((r) => evaluate(r, read));
  if ("or" in rule) return rule.or.some((r) => evaluate(r, read));
  if ("not" in rule) return !evaluate(rule.not, read);
  const actual = read(rule.field);
  const has = actual !== undefined && actual !== null;
  switch (rule.op) {
    case "exists":
      return has;
    case "eq":
      return has && actual === rule.value;
    case "ne":
      return !has || actual !== rule.value;
    case "in":
      return has && (rule.value as unknown[]).includes(actual);
    case "contains":
      return has && typeof actual === "string" && actual.includes(rule.value as string);
    case "gt":
      return has && (actual as number) > (rule.value as number);
    case "gte":
      return has && (actual as number) >= (rule.value as number);
    case "lt":
      return has && (actual as number) < (rule.value as number);
    case "lte":
      return has && (actual as number) <= (rule.value as number);
    default:
      throw new Error(`unknown operator ${rule.op}`);
  }
}

/**
 * Whether the user matches (null: no such user). Reads the user's values, then one record per
 * primary attribute the rule reaches through, linked by the user's value of that field.
 */
async function matches(driver: Driver, accountId: string, endUserId: string, rule: Rule): Promise<boolean | null> {
  const user = await driver.user(accountId, endUserId);
  if (!user) return null;
  const stored = new Map(user.values.map((v) => [v.name, v]));
  const custom = new Map<string, unknown>();
  const customValue = (name: string) => {
    if (!custom.has(name)) {
      const v = stored.get(name);
      custom.set(name, v ? decode(v) : undefined);
    }
    return custom.get(name);
  };
  const attributes = new Map<string, unknown>();
  const primaries = new Set(pathsOf(rule).flatMap((p) => (p.startsWith("attribute.") ? [p.split(".")[1]!] : [])));
  for (const primary of primaries) {
    const value = customValue(primary);
    if (value === undefined || value === null) continue;
    for (const v of await driver.attributes(accountId, primary, String(value))) attributes.set(`${primary}.${v.name}`, decode(v));
  }
  return evaluate(rule, (path) => {
    const [kind, a, b] = path.split(".");
    return kind === "custom" ? customValue(a!) : attributes.get(`${a}.${b}`);
  });
}

// ---- routes ------------------------------------------------------------------------------------

function fail(res: Response, status: number, detail: string): void {
  res.status(status).type("application/problem+json").send(JSON.stringify({ status, detail }));
}

const contentRecord = (c: ContentRow) => ({
  id: c.id,
  title: c.title,
  type: c.type,
  url: c.url,
  source: c.source,
  description: c.description,
  description_md: c.descriptionMd,
  tags: JSON.parse(c.tags) as string[],
  state: c.state,
  stage: c.stage,
  parentId: c.parentId,
  creationTime: c.createdAt,
  lastUpdateTime: c.updatedAt,
});

export function rawSqlApp(databaseUrl: string): { app: express.Express; close(): Promise<void> } {
  const driver = /^postgres/.test(databaseUrl) ? postgresDriver(databaseUrl) : sqliteDriver(databaseUrl);

  /** The key, its owner and the account membership: null when they allow the request, else the failure. */
  const refusal = async (req: Request<{ accountId: string }>): Promise<[number, string] | null> => {
    const key = req.get(KEY_HEADER);
    const email = req.get(USER_HEADER);
    if (!key || !email) return [401, "missing credentials"];
    const k = await driver.key(key.slice(0, KEY_PREFIX_LENGTH), req.params.accountId);
    if (!k || !keyMatches(key, k.hash) || k.revokedAt || (k.expiresAt && k.expiresAt <= Date.now())) return [401, "invalid key"];
    if (k.email.toLowerCase() !== email.trim().toLowerCase()) return [401, "key owner mismatch"];
    if (!k.member || k.scope !== "integration") return [403, "no access"];
    return null;
  };
  const handle =
    <P extends { accountId: string }>(run: (req: Request<P>, res: Response) => Promise<void>) =>
    async (req: Request<P>, res: Response) => {
      try {
        const refused = await refusal(req);
        if (refused) fail(res, ...refused);
        else await run(req, res);
      } catch (err) {
        console.error("raw SQL route failed:", err);
        fail(res, 500, "unexpected error");
      }
    };

  const app = express();
  app.disable("x-powered-by");

  app.get(
    "/api/v1/:accountId/content",
    handle<{ accountId: string }>(async (req, res) => {
      const limit = req.query.limit === undefined ? LIST_LIMITS.standard.default : Number(req.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMITS.standard.max) return fail(res, 400, "bad limit");
      let after: [number, string] | null = null;
      if (typeof req.query.cursor === "string") {
        try {
          // The list's cursors name their order and account, as guidegate's do (a creation cursor
          // of an older release, without them, is read as one).
          const at = cursorPosition(req.query.cursor, true, req.params.accountId, CREATED)!;
          after = [(at.sort as Date).getTime(), at.id];
        } catch {
          return fail(res, 400, "malformed cursor");
        }
      }
      const rows = await driver.page(req.params.accountId, limit + 1, after);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      res.json({
        data: page.map(contentRecord),
        cursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id, req.params.accountId, CREATED.name) : null,
      });
    }),
  );

  app.get(
    "/v1/accounts/:accountId/endUsers/:id",
    handle<{ accountId: string; id: string }>(async (req, res) => {
      if (req.query.fields !== "custom") return fail(res, 400, "this baseline serves fields=custom only");
      const user = await driver.user(req.params.accountId, req.params.id);
      if (!user) return fail(res, 404, `No end user with id '${req.params.id}'.`);
      res.json({
        id: user.externalId,
        creationTime: user.createdAt,
        lastUpdateTime: user.updatedAt,
        custom: Object.fromEntries(user.values.map((v) => [v.name, decode(v)])),
      });
    }),
  );

  app.get(
    "/v1/accounts/:accountId/segments/:segmentId/contentOrder",
    handle<{ accountId: string; segmentId: string }>(async (req, res) => {
      const { accountId, segmentId } = req.params;
      const endUserId = req.query.id;
      if (typeof endUserId !== "string" || !endUserId) return fail(res, 400, "id is required");
      const rule = await driver.segmentRule(accountId, segmentId);
      if (rule === undefined) return fail(res, 404, `No segment with id '${segmentId}'.`);
      const matched = await matches(driver, accountId, endUserId, JSON.parse(rule) as Rule);
      if (matched === null) return fail(res, 404, `No end user with id '${endUserId}'.`);
      if (!matched) return void res.json({ data: [] });
      const rows = await driver.segmentContent(accountId, segmentId, endUserId);
      // Completed content after the rest, each part in the segment's order.
      const ordered = [...rows.filter((c) => !c.done), ...rows.filter((c) => c.done)];
      res.json({ data: ordered.map(contentRecord) });
    }),
  );

  return { app, close: () => driver.close() };
}

// ---- process -----------------------------------------------------------------------------------

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is not set");
const { app, close } = rawSqlApp(url);
const server = app.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.once("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void close().finally(() => process.exit(0)));
});
