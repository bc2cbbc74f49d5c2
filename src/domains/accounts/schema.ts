// The tenant boundary. Every domain query hangs off `account(id)`, and every mutation takes an
// `accountId`; both go through requireAccount, which is where 401/403 are decided.

import { authorize, authorizeScope, type Identity } from "../../auth/identity.js";
import type { KeyScope } from "../../auth/keys.js";
import type { Context } from "../../context.js";
import { notFound } from "../../errors.js";
import { rateLimitRejections } from "../../observability/counters.js";
import { rateLimited, rateLimitHeaders } from "../../ratelimit.js";
import { builder } from "../../schema/builder.js";

/**
 * The gate of every account-scoped field: authenticates (401), authorizes (403), and charges the
 * account's rate budget once per request (429), setting the RateLimit-* headers on the response.
 */
export async function requireAccount(ctx: Context, accountId: string, scopes: readonly KeyScope[] = ["integration"]): Promise<Identity> {
  const identity = authorize(await ctx.identity(), accountId, scopes);
  if (ctx.rateLimiter) {
    let charge = ctx.charged.get(accountId);
    if (!charge) {
      // The account's own limit came with the identity (no lookup of its own).
      charge = ctx.rateLimiter.consume(accountId, identity.accounts.get(accountId)?.rateLimitPerMinute ?? null).then((d) => {
        if (ctx.res && !ctx.res.headersSent) ctx.res.set(rateLimitHeaders(d));
        if (!d.allowed) {
          rateLimitRejections.inc(accountId);
          throw rateLimited(accountId, d);
        }
      });
      ctx.charged.set(accountId, charge);
    }
    await charge;
  }
  return identity;
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
