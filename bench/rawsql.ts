// Baseline (d): the style A list route over the database driver directly (better-sqlite3 or pg),
// no Prisma and no GraphQL: one prepared statement checks the key and the account, one returns
// the page with each content's tags aggregated in SQL, and the JSON is the REST route's byte for
// byte. It is the floor the REST route's cost is measured against.
import Database from "better-sqlite3";
import express, { type Request, type Response } from "express";
import pg from "pg";
import { KEY_HEADER, USER_HEADER } from "../src/auth/identity.js";
import { KEY_PREFIX_LENGTH, keyMatches } from "../src/auth/keys.js";
import { sqliteFile } from "../src/db/migrate.js";
import { decodeCursor, encodeCursor, LIST_LIMITS } from "../src/schema/pagination.js";

interface Row {
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
  tags: string;
}
interface KeyRow {
  hash: string;
  scope: string;
  expiresAt: number | null;
  revokedAt: number | null;
  email: string;
  member: number;
}

interface Driver {
  key(prefix: string, accountId: string): Promise<KeyRow | undefined>;
  page(accountId: string, limit: number, after: [number, string] | null): Promise<Row[]>;
  close(): Promise<void>;
}

// Tag ids ordered by tag name in code-point order (the REST route sorts them so).
export const SQLITE_PAGE = (after: boolean) => `SELECT c.id, c.title, c.type, c.url, c.source, c.description, c.descriptionMd, c.state, c.stage, c.parentId,
  c.createdAt, c.updatedAt,
  (SELECT json_group_array(id) FROM (SELECT t.id FROM ContentTag ct JOIN Tag t ON t.id = ct.tagId WHERE ct.contentId = c.id ORDER BY t.name)) AS tags
  FROM Content c WHERE c.accountId = ?${after ? " AND (c.createdAt > ? OR (c.createdAt = ? AND c.id > ?))" : ""}
  ORDER BY c.createdAt, c.id LIMIT ?`;
const SQLITE_KEY = `SELECT k.hash, k.scope, k.expiresAt, k.revokedAt, u.email,
  EXISTS (SELECT 1 FROM Membership m WHERE m.userId = u.id AND m.accountId = ?) AS member
  FROM ApiKey k JOIN User u ON u.id = k.userId WHERE k.prefix = ?`;

function sqliteDriver(url: string): Driver {
  const db = new Database(sqliteFile(url), { readonly: true });
  const key = db.prepare(SQLITE_KEY);
  const first = db.prepare(SQLITE_PAGE(false));
  const next = db.prepare(SQLITE_PAGE(true));
  // Prisma stores SQLite DateTimes as ISO text: compare and return them as such.
  const time = (v: unknown) => (typeof v === "number" ? v : Date.parse(String(v)));
  const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");
  const toRow = (r: any): Row => ({ ...r, createdAt: time(r.createdAt), updatedAt: time(r.updatedAt) });
  return {
    key: async (prefix, accountId) => {
      const r = key.get(accountId, prefix) as any;
      return r && { ...r, expiresAt: r.expiresAt == null ? null : time(r.expiresAt), revokedAt: r.revokedAt == null ? null : time(r.revokedAt) };
    },
    page: async (accountId, limit, after) =>
      (after ? next.all(accountId, iso(after[0]), iso(after[0]), after[1], limit) : first.all(accountId, limit)).map(toRow),
    close: async () => void db.close(),
  };
}

export const PG_PAGE = `SELECT c.id, c.title, c.type, c.url, c.source, c.description, c."descriptionMd", c.state, c.stage, c."parentId",
  (extract(epoch from c."createdAt") * 1000)::bigint AS "createdAt", (extract(epoch from c."updatedAt") * 1000)::bigint AS "updatedAt",
  COALESCE((SELECT json_agg(t.id ORDER BY t.name COLLATE "C") FROM "ContentTag" ct JOIN "Tag" t ON t.id = ct."tagId" WHERE ct."contentId" = c.id), '[]')::text AS tags
  FROM "Content" c WHERE c."accountId" = $1 AND ($2::timestamp IS NULL OR c."createdAt" > $2 OR (c."createdAt" = $2 AND c.id > $3))
  ORDER BY c."createdAt", c.id LIMIT $4`;
const PG_KEY = `SELECT k.hash, k.scope, (extract(epoch from k."expiresAt") * 1000)::bigint AS "expiresAt", k."revokedAt" IS NOT NULL AS "revokedAt", u.email,
  EXISTS (SELECT 1 FROM "Membership" m WHERE m."userId" = u.id AND m."accountId" = $2) AS member
  FROM "ApiKey" k JOIN "User" u ON u.id = k."userId" WHERE k.prefix = $1`;

function postgresDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const stamp = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
  return {
    key: async (prefix, accountId) => {
      const r = (await pool.query({ name: "key", text: PG_KEY, values: [prefix, accountId] })).rows[0];
      return r && { ...r, expiresAt: r.expiresAt == null ? null : Number(r.expiresAt), revokedAt: r.revokedAt ? 1 : null };
    },
    page: async (accountId, limit, after) =>
      (await pool.query({ name: "page", text: PG_PAGE, values: [accountId, after ? stamp(after[0]) : null, after?.[1] ?? null, limit] })).rows.map((r) => ({
        ...r,
        createdAt: Number(r.createdAt),
        updatedAt: Number(r.updatedAt),
      })),
    close: () => pool.end(),
  };
}

function fail(res: Response, status: number, detail: string): void {
  res.status(status).type("application/problem+json").send(JSON.stringify({ status, detail }));
}

export function rawSqlApp(databaseUrl: string): { app: express.Express; close(): Promise<void> } {
  const driver = /^postgres/.test(databaseUrl) ? postgresDriver(databaseUrl) : sqliteDriver(databaseUrl);
  const app = express();
  app.disable("x-powered-by");
  app.get("/api/v1/:accountId/content", async (req: Request<{ accountId: string }>, res: Response) => {
    try {
      const { accountId } = req.params;
      const key = req.get(KEY_HEADER);
      const email = req.get(USER_HEADER);
      if (!key || !email) return fail(res, 401, "missing credentials");
      const k = await driver.key(key.slice(0, KEY_PREFIX_LENGTH), accountId);
      if (!k || !keyMatches(key, k.hash) || k.revokedAt || (k.expiresAt && k.expiresAt <= Date.now())) return fail(res, 401, "invalid key");
      if (k.email.toLowerCase() !== email.trim().toLowerCase()) return fail(res, 401, "key owner mismatch");
      if (!k.member || k.scope !== "integration") return fail(res, 403, "no access");

      const limit = req.query.limit === undefined ? LIST_LIMITS.standard.default : Number(req.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMITS.standard.max) return fail(res, 400, "bad limit");
      let after: [number, string] | null = null;
      if (typeof req.query.cursor === "string") {
        try {
          const [time, id] = decodeCursor(req.query.cursor);
          after = [Number(time), id];
        } catch {
          return fail(res, 400, "malformed cursor");
        }
      }
      const rows = await driver.page(accountId, limit + 1, after);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      res.json({
        data: page.map((c) => ({
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
        })),
        cursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null,
      });
    } catch (err) {
      console.error("raw SQL route failed:", err);
      fail(res, 500, "unexpected error");
    }
  });
  return { app, close: () => driver.close() };
}
