// The tenant boundary. Every domain query hangs off `account(id)`, and every mutation takes an
// `accountId`; both go through requireAccount, which is where 401/403 are decided.

import { authorize, authorizeScope, type Identity } from "../../auth/identity.js";
import type { KeyScope } from "../../auth/keys.js";
import type { Context, RequestCost } from "../../context.js";
import { AppError, notFound } from "../../errors.js";
import { pointsOf } from "../../graphql/cost.js";
import { rateLimitRejections } from "../../observability/counters.js";
import { rateLimited, rateLimitHeaders } from "../../ratelimit.js";
import { builder } from "../../schema/builder.js";

/**
 * The gate of every account-scoped field: authenticates (401), authorizes (403), and charges the
 * account's budget once per request (429) what the request costs (`ctx.cost`, priced before it ran;
 * 1 point when unpriced), setting the RateLimit-* headers on the response. REST routes and GraphQL
 * operations naming their accounts are charged before they run (chargeRequest); this charges what
 * nothing charged before, as the first field of that account resolves.
 */
export async function requireAccount(ctx: Context, accountId: string, scopes: readonly KeyScope[] = ["integration"]): Promise<Identity> {
  const identity = authorize(await ctx.identity(), accountId, scopes);
  await charge(ctx, accountId, identity);
  return identity;
}

function charge(ctx: Context, accountId: string, identity: Identity): Promise<void> {
  if (!ctx.rateLimiter) return Promise.resolve();
  let charged = ctx.charged.get(accountId);
  if (!charged) {
    const cost = (ctx.cost ??= { units: 0, points: 1, throttle: null });
    // The account's own limit came with the identity (no lookup of its own).
    charged = ctx.rateLimiter.consume(accountId, identity.accounts.get(accountId)?.rateLimitPerMinute ?? null, cost.points).then((d) => {
      cost.throttle ??= d;
      if (ctx.res && !ctx.res.headersSent) ctx.res.set(rateLimitHeaders(d));
      if (!d.allowed) {
        rateLimitRejections.inc(accountId);
        cost.throttle = d;
        throw (cost.refused = rateLimited(accountId, d, "Rate limit", cost.points, { cost: costExtension(cost, true) }));
      }
    });
    ctx.charged.set(accountId, charged);
  }
  return charged;
}

/**
 * Prices a request before it runs and charges the accounts it names: `units` from its operation's
 * cost plan (src/graphql/cost.ts). Access is decided first, as on REST (src/rest/router.ts authorizes
 * before it charges): a request past the hard maximum (RATE_LIMIT_MAX_REQUEST_POINTS) that names an
 * account the key may not use is that account's 403, not a 400 about its cost, so a caller learns
 * nothing from asking about what it cannot see. Otherwise past the maximum it is a 400 that names
 * its cost, charged nothing; past an account's remaining points a 429. An account the key may not
 * use in a request within the maximum is left to the field that names it (its 403, uncharged; the
 * other fields answer).
 */
export async function chargeRequest(ctx: Context, units: number, accountIds: readonly string[], scopes: readonly KeyScope[] = ["integration"]): Promise<void> {
  const cost: RequestCost = (ctx.cost = { units, points: pointsOf(units), throttle: null });
  const allowed: [string, Identity][] = [];
  let denied: AppError | undefined;
  for (const accountId of accountIds) {
    try {
      allowed.push([accountId, authorize(await ctx.identity(), accountId, scopes)]);
    } catch (err) {
      if (err instanceof AppError) denied ??= err;
    }
  }
  const max = ctx.rateLimiter?.maxRequestPoints ?? Number.POSITIVE_INFINITY;
  if (cost.points > max) throw (cost.refused = denied ?? tooCostly(cost, max));
  for (const [accountId, identity] of allowed) await charge(ctx, accountId, identity);
}

function tooCostly(cost: RequestCost, max: number): AppError {
  return new AppError(
    400,
    `This request costs ${cost.points} points (${cost.units} units: objects and rows it may read), more than the ${max} one request may cost (RATE_LIMIT_MAX_REQUEST_POINTS): ask for fewer items (smaller first/limit) or a narrower window.`,
    [{ path: "(request)", message: `costs ${cost.points} points; at most ${max}` }],
    undefined,
    { code: "MAX_COST_EXCEEDED", cost: costExtension(cost, true) },
  );
}

/**
 * A GraphQL answer's `extensions.cost`, Shopify's shape, in points. `actualQueryCost` is what was
 * charged: the requested cost (the static upper bound, nothing refunded), 0 when the request touched
 * no account (`viewer`, `__typename`: nothing is charged), null when refused. `throttleStatus` is
 * the budget of the account charged (the first one, if several); null when none was.
 */
export function costExtension(cost: RequestCost | undefined, refused = Boolean(cost?.refused)) {
  const c = cost ?? { units: 0, points: 1, throttle: null };
  const t = c.throttle;
  return {
    requestedQueryCost: c.points,
    actualQueryCost: refused ? null : t ? c.points : 0,
    throttleStatus: t ? { maximumAvailable: t.limit, currentlyAvailable: t.remaining, restoreRate: Math.round((t.limit / 60) * 1000) / 1000 } : null,
  };
}

export const IdMethod = builder.enumType("IdMethod", {
  description: "How the account identifies end users (spec: end-user identification rules).",
  values: ["app_user_id", "crm_user_id", "cookie"] as const,
});

export const Account = builder.prismaObject("Account", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    idMethod: t.field({ type: IdMethod, resolve: (a) => a.idMethod as "cookie" }),
  }),
});

builder.queryField("account", (t) =>
  t.prismaField({
    type: Account,
    description: "An account the caller's key has access to. 401 without a valid key, 403 without access.",
    args: { id: t.arg.string({ required: true }) },
    // The argument naming the account, for the budget charged before execution (src/graphql/cost.ts accountsOf).
    extensions: { accountArg: "id" },
    // The account's row came with the caller's identity (its scalar fields are all an Account
    // exposes; its lists resolve from its id), so no query of its own.
    resolve: async (_query, _root, { id }, ctx) => {
      const account = (await requireAccount(ctx, id)).accounts.get(id);
      if (!account) throw notFound(`Account '${id}' does not exist.`);
      return account as never;
    },
  }),
);

const Viewer = builder.objectRef<{ email: string; scope: string; accountIds: string[] }>("Viewer").implement({
  fields: (t) => ({ email: t.exposeString("email"), scope: t.exposeString("scope"), accountIds: t.exposeStringList("accountIds") }),
});

builder.queryField("viewer", (t) =>
  t.field({
    type: Viewer,
    description: "Who the credentials of this request belong to: for keys that may read accounts (scope integration); 403 for others.",
    // A write (ingest) or auditlogs key answers nothing here, as it answers nothing on account(id):
    // its user's e-mail and accounts are not its to read.
    resolve: async (_root, _args, ctx) => {
      const id = authorizeScope(await ctx.identity());
      return { email: id.email, scope: id.scope, accountIds: [...id.accountIds].sort() };
    },
  }),
);
