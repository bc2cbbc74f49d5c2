// Baseline (c): the style A list route written by hand, with none of the GraphQL layer. Same API-key
// rules as src/auth/identity.ts (one lookup of the key by prefix, with the owner's membership), one
// findMany for the page, and the same JSON as the REST route, so that the gap between (a) and (c) is
// what the route table + Yoga + Pothos cost, not a difference in work done.
import express, { type Request, type Response } from "express";
import { KEY_HEADER, USER_HEADER } from "../src/auth/identity.js";
import { KEY_PREFIX_LENGTH, keyMatches } from "../src/auth/keys.js";
import { dbKind, prisma } from "../src/db/index.js";
import { PG_PAGE, SQLITE_PAGE } from "./rawsql.js";
import { decodeCursor, encodeCursor, LIST_LIMITS } from "../src/schema/pagination.js";

function fail(res: Response, status: number, detail: string): void {
  res.status(status).type("application/problem+json").send(JSON.stringify({ status, detail }));
}

/** Whether the caller's key is valid, belongs to x-service-user and grants `accountId`. */
async function allowed(req: Request, accountId: string): Promise<{ status: 401 | 403; detail: string } | null> {
  const key = req.get(KEY_HEADER);
  const email = req.get(USER_HEADER);
  if (!key || !email) return { status: 401, detail: "missing credentials" };
  const row = await prisma.apiKey.findUnique({
    where: { prefix: key.slice(0, KEY_PREFIX_LENGTH) },
    select: {
      hash: true,
      scope: true,
      expiresAt: true,
      revokedAt: true,
      user: { select: { email: true, memberships: { where: { accountId }, select: { accountId: true } } } },
    },
  });
  if (!row || !keyMatches(key, row.hash) || row.revokedAt || (row.expiresAt && row.expiresAt <= new Date())) {
    return { status: 401, detail: "invalid key" };
  }
  if (row.user.email.toLowerCase() !== email.trim().toLowerCase()) return { status: 401, detail: "key owner mismatch" };
  if (row.user.memberships.length === 0 || row.scope !== "integration") return { status: 403, detail: "no access" };
  return null;
}

type ContentColumns = Record<"id" | "title" | "type" | "state" | "stage", string> &
  Record<"url" | "source" | "description" | "descriptionMd" | "parentId", string | null>;

/** The wire record, fields in the REST route's order (the equivalence check compares bytes). */
const wire = (c: ContentColumns, tags: string[], creationTime: number, lastUpdateTime: number) => ({
  id: c.id,
  title: c.title,
  type: c.type,
  url: c.url,
  source: c.source,
  description: c.description,
  description_md: c.descriptionMd,
  tags,
  state: c.state,
  stage: c.stage,
  parentId: c.parentId,
  creationTime,
  lastUpdateTime,
});

export function handwrittenApp(): express.Express {
  const app = express();
  app.disable("x-powered-by");

  app.get("/api/v1/:accountId/content", async (req: Request<{ accountId: string }>, res: Response) => {
    try {
      const { accountId } = req.params;
      const denied = await allowed(req, accountId);
      if (denied) return fail(res, denied.status, denied.detail);

      const rawLimit = req.query.limit;
      const limit = rawLimit === undefined ? LIST_LIMITS.standard.default : Number(rawLimit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMITS.standard.max) return fail(res, 400, "bad limit");
      let after = {};
      if (typeof req.query.cursor === "string") {
        let time: string | number, id: string;
        try {
          [time, id] = decodeCursor(req.query.cursor);
        } catch {
          return fail(res, 400, "malformed cursor");
        }
        const at = new Date(time);
        after = { OR: [{ createdAt: { gt: at } }, { createdAt: at, id: { gt: id } }] };
      }

      const rows = await prisma.content.findMany({
        where: { accountId, ...after },
        include: { tags: { include: { tag: true } } },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        take: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      res.json({
        // Field order matters: the equivalence check compares the two responses byte for byte.
        data: page.map((c) =>
          wire(
            c,
            // Sorted in JavaScript like the GraphQL resolver does; database collations differ.
            c.tags
              .map((l) => l.tag)
              .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
              .map((t) => t.id),
            c.createdAt.getTime(),
            c.updatedAt.getTime(),
          ),
        ),
        cursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null,
      });
    } catch (err) {
      console.error("hand-written route failed:", err);
      fail(res, 500, "unexpected error");
    }
  });

  // Variant (e): the same route with the page and its tags in ONE statement through Prisma's
  // $queryRaw (tags aggregated in SQL, as (d) does over the driver), against (c)'s three-statement
  // include: what issue-9's "one statement per page" would gain inside Prisma. First pages only.
  const postgres = dbKind() === "postgres";
  // Prisma's raw SQLite results drop the milliseconds of DATETIME columns: read them as text.
  const SQLITE_ONE_STATEMENT = SQLITE_PAGE(false).replace(
    "c.createdAt, c.updatedAt,",
    "CAST(c.createdAt AS TEXT) AS createdAt, CAST(c.updatedAt AS TEXT) AS updatedAt,",
  );
  app.get("/api/v1/:accountId/content-onestatement", async (req: Request<{ accountId: string }>, res: Response) => {
    try {
      const { accountId } = req.params;
      const denied = await allowed(req, accountId);
      if (denied) return fail(res, denied.status, denied.detail);
      const limit = req.query.limit === undefined ? LIST_LIMITS.standard.default : Number(req.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMITS.standard.max) return fail(res, 400, "bad limit");
      const rows = (
        postgres
          ? await prisma.$queryRawUnsafe(PG_PAGE, accountId, null, null, limit + 1)
          : await prisma.$queryRawUnsafe(SQLITE_ONE_STATEMENT, accountId, limit + 1)
      ) as Record<string, any>[];
      const time = (v: unknown) => (typeof v === "bigint" || typeof v === "number" ? Number(v) : Date.parse(String(v)));
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      res.json({
        data: page.map((c) => wire(c as Parameters<typeof wire>[0], JSON.parse(c.tags), time(c.createdAt), time(c.updatedAt))),
        cursor: rows.length > limit && last ? encodeCursor(time(last.createdAt), last.id) : null,
      });
    } catch (err) {
      console.error("hand-written route failed:", err);
      fail(res, 500, "unexpected error");
    }
  });

  return app;
}
