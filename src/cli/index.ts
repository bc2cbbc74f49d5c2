// Administration from the command line: `npm run cli -- <command>`. Applies pending migrations
// first, like the server, so it works on a brand-new database. Output for people goes to stderr;
// what scripts capture (a new key) is the last line of stdout.
import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { AdminError, createAccount, createKey, createUser, listKeys, revokeKey, setAccount } from "../admin.js";
import { requestScope } from "../audit/requestScope.js";
import { loadConfig, sessionDatabaseUrl } from "../config.js";
import { configureDatabase, disconnectDb, prepareDb } from "../db/index.js";
import { migrate } from "../db/migrate.js";
import { writePolicy } from "../domains/index.js";
import { DEMO_EMAIL, seedDemo } from "../seed/demo.js";
import { consoleProgress } from "../seed/progress.js";

const USAGE = `usage: npm run cli -- <command>
  account create <accountId> [--name <name>] [--id-method app_user_id|crm_user_id|cookie]
  account set <accountId> [--audit-token-ttl <seconds>] [--rate-limit <perMinute>] [--id-method <method>]
  user create <email> --account <accountId>[,<accountId>...]
  key create <email> [--ttl <seconds>] [--scope integration|auditlogs|ingest] [--account <accountId>] [--persisted-only]
                                            --persisted-only: the key runs registered GraphQL documents (documentId) only
  key list [--email <email>]
  key revoke <keyPrefix>
  documents push <accountId> <manifest.json>  register persisted GraphQL documents ({"sha256:<hex>": "<text>", ...})
  seed --demo
  rollups rebuild [--account <accountId>]   recompute the reports' rollups from the events
  rollups status [--account <accountId>]    how far the rollup worker is: watermark, events pending, lag`;

const int = (v: string | undefined, flag: string) => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new AdminError(`${flag} must be a whole number`);
  return Number(v);
};

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      "id-method": { type: "string" },
      "audit-token-ttl": { type: "string" },
      "rate-limit": { type: "string" },
      account: { type: "string" },
      ttl: { type: "string" },
      scope: { type: "string" },
      email: { type: "string" },
      demo: { type: "boolean" },
      "persisted-only": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [group, action, arg, arg2] = positionals;
  if (values.help || !group) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const config = loadConfig();
  configureDatabase(writePolicy);
  await migrate(sessionDatabaseUrl(config), (m) => console.error(m));
  await prepareDb();
  try {
    switch (`${group} ${group === "seed" ? "" : (action ?? "")}`.trim()) {
      case "account create": {
        if (!arg) throw new AdminError("account create needs <accountId>");
        const a = await createAccount(arg, { name: values.name, idMethod: values["id-method"] });
        console.log(`account ${a.id} created (id method ${a.idMethod})`);
        return 0;
      }
      case "account set": {
        if (!arg) throw new AdminError("account set needs <accountId>");
        const a = await setAccount(arg, {
          auditTokenTtl: int(values["audit-token-ttl"], "--audit-token-ttl"),
          rateLimitPerMinute: int(values["rate-limit"], "--rate-limit"),
          idMethod: values["id-method"],
        });
        console.log(
          `account ${a.id}: audit-token TTL ${a.auditTokenTtlSeconds}s, rate limit ${a.rateLimitPerMinute ?? "default"}/min, id method ${a.idMethod}`,
        );
        return 0;
      }
      case "user create": {
        if (!arg) throw new AdminError("user create needs <email>");
        const accounts = (values.account ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
        const u = await createUser(arg, accounts);
        console.log(`user ${u.email} has access to ${accounts.join(", ")}`);
        return 0;
      }
      case "key create": {
        if (!arg) throw new AdminError("key create needs <email>");
        const k = await createKey(arg, {
          ttlSeconds: int(values.ttl, "--ttl"),
          scope: values.scope,
          accountId: values.account,
          persistedOnly: values["persisted-only"],
        });
        console.error(
          `key ${k.prefix}… (scope ${k.scope}${k.accountId ? ` for account ${k.accountId}` : ""}${k.persistedOnly ? ", persisted documents only" : ""}, ${k.expiresAt ? `expires ${k.expiresAt.toISOString()}` : "no expiry"}); it is shown once:`,
        );
        console.log(k.key);
        return 0;
      }
      case "key list": {
        const rows = await listKeys(values.email);
        for (const k of rows) {
          console.log(
            [
              k.prefix,
              k.user.email,
              (k.accountId ? `${k.scope}:${k.accountId}` : k.scope) + (k.persistedOnly ? "+persisted-only" : ""),
              k.expiresAt?.toISOString() ?? "never",
              k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : "active",
              `last used ${k.lastUsedAt?.toISOString() ?? "never"}`,
            ].join("\t"),
          );
        }
        if (!rows.length) console.error("no keys");
        return 0;
      }
      case "key revoke": {
        if (!arg) throw new AdminError("key revoke needs <keyPrefix>");
        const k = await revokeKey(arg);
        console.log(`key ${k.prefix} revoked`);
        return 0;
      }
      case "documents push": {
        if (!arg || !arg2) throw new AdminError("documents push needs <accountId> <manifest.json>");
        const { accountExists, manifestEntries, storeManifest } = await import("../domains/persistedDocuments/store.js");
        if (!(await accountExists(arg))) throw new AdminError(`account '${arg}' does not exist`);
        let manifest: unknown;
        try {
          manifest = JSON.parse(await readFile(arg2, "utf8"));
        } catch (err) {
          throw new AdminError(`cannot read the manifest ${arg2}: ${(err as Error).message}`);
        }
        const { schema } = await import("../schema/index.js");
        try {
          const stored = await storeManifest(arg, manifestEntries(manifest), schema);
          console.log(`${stored} persisted documents stored for account ${arg}`);
        } catch (err) {
          // The manifest's problems, one line each (the same checks as the REST route).
          const known = err as { fieldErrors?: { path: string; message: string }[]; message: string; status?: number };
          if (known.status !== 400) throw err;
          for (const e of known.fieldErrors ?? []) console.error(`${e.path}: ${e.message}`);
          throw new AdminError(known.message);
        }
        return 0;
      }
      case "rollups rebuild": {
        const { rebuildRollups } = await import("../domains/reports/rollupWorker.js");
        const t0 = Date.now();
        const r = await rebuildRollups(values.account);
        console.log(
          `rollups of ${values.account ? `account ${values.account}` : `every account (${r.accounts})`} rebuilt from ${r.events} events (${Date.now() - t0} ms)`,
        );
        return 0;
      }
      case "rollups status": {
        const { rollupStatus } = await import("../domains/reports/rollupWorker.js");
        const rows = await rollupStatus(values.account ? [values.account] : undefined);
        for (const s of rows)
          console.log([s.accountId, `watermark ${s.watermark}`, `${s.pending} events pending`, `lag ${s.lagSeconds.toFixed(1)} s`].join("\t"));
        if (!rows.length) console.error("no events");
        return 0;
      }
      case "seed": {
        if (!values.demo) throw new AdminError("seed needs --demo");
        const { key, accountId } = await seedDemo({ progress: consoleProgress() });
        console.error(`demo account '${accountId}' seeded; user ${DEMO_EMAIL}; its key:`);
        console.log(key);
        return 0;
      }
      default:
        console.error(USAGE);
        return 2;
    }
  } finally {
    await disconnectDb();
  }
}

requestScope
  .run({ requestId: null, ip: null, actor: `cli:${userInfo().username}` }, () => main(process.argv.slice(2)))
  .then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof AdminError || (err?.name === "TypeError" && /parseArgs|option/i.test(err.message)) ? `error: ${err.message}` : err);
      process.exit(err instanceof AdminError ? 2 : 1);
    },
  );
