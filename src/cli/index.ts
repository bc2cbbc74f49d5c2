// Administration from the command line: `npm run cli -- <command>`. Applies pending migrations
// first, like the server, so it works on a brand-new database. Output for people goes to stderr;
// what scripts capture (a new key) is the last line of stdout.
//
// The command line is checked whole before anything else happens (no configuration read, no
// database opened or migrated): each command takes its own options and arguments, and anything
// else (an unknown command, an option of another command, an extra argument) is refused with exit
// code 2.
import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { AdminError, createAccount, createKey, createUser, keyStatus, listKeys, requireAccount, revokeKeys, setAccount } from "../admin.js";
import { requestScope } from "../audit/requestScope.js";
import { loadConfig, sessionDatabaseUrl, sessionDatabaseVariable } from "../config.js";
import { configureDatabase, disconnectDb, prepareDb } from "../db/index.js";
import { DatabaseOpenError, migrate } from "../db/migrate.js";
import { writePolicy } from "../domains/index.js";
import { DEMO_EMAIL, seedDemo } from "../seed/demo.js";
import { consoleProgress } from "../seed/progress.js";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Values = Record<string, string | boolean | undefined>;

interface Command {
  /** The positional arguments after the command's words, all required; `variadic`: the last one repeats. */
  args: string[];
  variadic?: boolean;
  options: Options;
  /** Options the command cannot run without. */
  required?: string[];
  usage: string;
  /** What it does, in the usage text (when its synopsis does not say it all). */
  about?: string;
  run(values: Values, args: string[]): Promise<number>;
}

const str = (v: string | boolean | undefined) => (typeof v === "string" ? v : undefined);

const int = (v: string | boolean | undefined, flag: string) => {
  if (typeof v !== "string") return undefined;
  if (!/^\d+$/.test(v)) throw new AdminError(`${flag} must be a whole number`);
  return Number(v);
};

const COMMANDS: Record<string, Command> = {
  "account create": {
    args: ["accountId"],
    options: { name: { type: "string" }, "id-method": { type: "string" } },
    usage: "account create <accountId> [--name <name>] [--id-method app_user_id|crm_user_id|cookie]",
    async run(values, [id]) {
      const a = await createAccount(id!, { name: str(values.name), idMethod: str(values["id-method"]) });
      console.log(`account ${a.id} created (id method ${a.idMethod})`);
      return 0;
    },
  },
  "account set": {
    args: ["accountId"],
    options: { "audit-token-ttl": { type: "string" }, "rate-limit": { type: "string" }, "id-method": { type: "string" } },
    usage: "account set <accountId> [--audit-token-ttl <seconds>] [--rate-limit <perMinute>|default] [--id-method <method>]",
    async run(values, [id]) {
      const rate = values["rate-limit"];
      const a = await setAccount(id!, {
        auditTokenTtl: int(values["audit-token-ttl"], "--audit-token-ttl"),
        // `default`: the account follows RATE_LIMIT_PER_MINUTE again.
        rateLimitPerMinute: rate === "default" ? null : int(rate, "--rate-limit (or 'default')"),
        idMethod: str(values["id-method"]),
      });
      console.log(`account ${a.id}: audit-token TTL ${a.auditTokenTtlSeconds}s, rate limit ${a.rateLimitPerMinute ?? "default"}/min, id method ${a.idMethod}`);
      return 0;
    },
  },
  "user create": {
    args: ["email"],
    options: { account: { type: "string" } },
    required: ["account"],
    usage: "user create <email> --account <accountId>[,<accountId>...]",
    async run(values, [email]) {
      const accounts = (str(values.account) ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const u = await createUser(email!, accounts);
      console.log(`user ${u.email} has access to ${accounts.join(", ")}`);
      return 0;
    },
  },
  "key create": {
    args: ["email"],
    options: { ttl: { type: "string" }, scope: { type: "string" }, account: { type: "string" }, "persisted-only": { type: "boolean" } },
    usage: "key create <email> [--ttl <seconds>] [--scope integration|auditlogs|ingest] [--account <accountId>] [--persisted-only]",
    about: "the key alone on the last line of stdout; --persisted-only: it runs registered GraphQL documents (documentId) only",
    async run(values, [email]) {
      const k = await createKey(email!, {
        ttlSeconds: int(values.ttl, "--ttl"),
        scope: str(values.scope),
        accountId: str(values.account),
        persistedOnly: values["persisted-only"] === true,
      });
      console.error(
        `key ${k.prefix}… (scope ${k.scope}${k.accountId ? ` for account ${k.accountId}` : ""}${k.persistedOnly ? ", persisted documents only" : ""}, ${k.expiresAt ? `expires ${k.expiresAt.toISOString()}` : "no expiry"}); it is shown once:`,
      );
      console.log(k.key);
      return 0;
    },
  },
  "key list": {
    args: [],
    options: { email: { type: "string" } },
    usage: "key list [--email <email>]",
    about: "each key's prefix, owner, scope, expiry, state (active, expired or revoked) and last use",
    async run(values) {
      const rows = await listKeys(str(values.email));
      for (const k of rows) {
        console.log(
          [
            k.prefix,
            k.user.email,
            (k.accountId ? `${k.scope}:${k.accountId}` : k.scope) + (k.persistedOnly ? "+persisted-only" : ""),
            k.expiresAt?.toISOString() ?? "never",
            keyStatus(k),
            `last used ${k.lastUsedAt?.toISOString() ?? "never"}`,
          ].join("\t"),
        );
      }
      if (!rows.length) console.error("no keys");
      return 0;
    },
  },
  "key revoke": {
    args: ["keyPrefix"],
    variadic: true,
    options: {},
    usage: "key revoke <keyPrefix> [<keyPrefix>...]",
    about: "all or none: an unknown prefix revokes nothing",
    async run(_values, prefixes) {
      for (const k of await revokeKeys(prefixes))
        console.log(k.alreadyRevoked ? `key ${k.prefix} was already revoked (${k.revokedAt.toISOString()})` : `key ${k.prefix} revoked`);
      return 0;
    },
  },
  "documents push": {
    args: ["accountId", "manifest.json"],
    options: {},
    usage: "documents push <accountId> <manifest.json>",
    about: 'register persisted GraphQL documents ({"sha256:<hex>": "<text>", ...})',
    async run(_values, [accountId, file]) {
      const { manifestEntries, storeManifest } = await import("../domains/persistedDocuments/store.js");
      await requireAccount(accountId!);
      let manifest: unknown;
      try {
        manifest = JSON.parse(await readFile(file!, "utf8"));
      } catch (err) {
        throw new AdminError(`cannot read the manifest ${file}: ${(err as Error).message}`);
      }
      const { schema } = await import("../schema/index.js");
      try {
        const stored = await storeManifest(accountId!, manifestEntries(manifest), schema);
        console.log(`${stored} persisted documents stored for account ${accountId}`);
      } catch (err) {
        // The manifest's problems, one line each (the same checks as the REST route).
        const known = err as { fieldErrors?: { path: string; message: string }[]; message: string; status?: number };
        if (known.status !== 400) throw err;
        for (const e of known.fieldErrors ?? []) console.error(`${e.path}: ${e.message}`);
        throw new AdminError(known.message);
      }
      return 0;
    },
  },
  seed: {
    args: [],
    options: { demo: { type: "boolean" } },
    required: ["demo"],
    usage: "seed --demo",
    about: "the demo account; refused once it exists (an interrupted seed is finished)",
    async run() {
      const { key, accountId } = await seedDemo({ progress: consoleProgress() });
      console.error(`demo account '${accountId}' seeded; user ${DEMO_EMAIL}; its key:`);
      console.log(key);
      return 0;
    },
  },
  "rollups rebuild": {
    args: [],
    options: { account: { type: "string" } },
    usage: "rollups rebuild [--account <accountId>]",
    about: "recompute the reports' rollups from the events",
    async run(values) {
      const account = str(values.account);
      if (account !== undefined) await requireAccount(account);
      const { rebuildRollups } = await import("../domains/reports/rollupWorker.js");
      const t0 = Date.now();
      const r = await rebuildRollups(account);
      console.log(`rollups of ${account ? `account ${account}` : `every account (${r.accounts})`} rebuilt from ${r.events} events (${Date.now() - t0} ms)`);
      return 0;
    },
  },
  "rollups status": {
    args: [],
    options: { account: { type: "string" } },
    usage: "rollups status [--account <accountId>]",
    about: "how far the rollup worker is: watermark, events pending, lag",
    async run(values) {
      const account = str(values.account);
      if (account !== undefined) await requireAccount(account);
      const { rollupStatus } = await import("../domains/reports/rollupWorker.js");
      const rows = await rollupStatus(account !== undefined ? [account] : undefined);
      for (const s of rows)
        console.log([s.accountId, `watermark ${s.watermark}`, `${s.pending} events pending`, `lag ${s.lagSeconds.toFixed(1)} s`].join("\t"));
      if (!rows.length) console.error("no events");
      return 0;
    },
  },
};

const usageOf = (c: Command) => {
  if (!c.about) return `  ${c.usage}`;
  return c.usage.length < 44 ? `  ${c.usage.padEnd(44)}${c.about}` : `  ${c.usage}\n  ${"".padEnd(44)}${c.about}`;
};
const USAGE = `usage: npm run cli -- <command>\n${Object.values(COMMANDS).map(usageOf).join("\n")}`;

/** A command line that cannot run: the message, then the usage (of its command, when known); exit code 2. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message);
  }
}

interface Parsed {
  command: Command;
  values: Values;
  args: string[];
}

/** The command, its options and its arguments, or a UsageError; reads nothing else. */
function parseCommandLine(argv: string[]): Parsed | "help" {
  if (argv.includes("-h") || argv.includes("--help")) return "help";
  const words = argv[0] === "seed" ? 1 : 2;
  const name = argv.slice(0, words).join(" ");
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(argv.length ? `unknown command '${name}'` : "no command given");
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv.slice(words), options: command.options, allowPositionals: true, strict: true }) as typeof parsed;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const option = /'([^']+)'/.exec(e.message)?.[1] ?? "an option";
      const known = Object.keys(command.options).map((o) => `--${o}`);
      throw new UsageError(`'${name}' takes no option ${option} (${known.length ? `its options: ${known.join(", ")}` : "it has no options"})`, command);
    }
    if (e.code?.startsWith("ERR_PARSE_ARGS_")) throw new UsageError(`'${name}': ${e.message.split("\n")[0]}`, command);
    throw err;
  }
  const args = parsed.positionals;
  const names = command.args.map((a) => `<${a}>`).join(" ");
  if (args.length < command.args.length) throw new UsageError(`'${name}' needs ${names}`, command);
  if (!command.variadic && args.length > command.args.length)
    throw new UsageError(
      `'${name}' takes ${command.args.length ? `only ${names}` : "no arguments"}; unexpected ${args
        .slice(command.args.length)
        .map((a) => `'${a}'`)
        .join(" ")}`,
      command,
    );
  for (const option of command.required ?? []) if (parsed.values[option] === undefined) throw new UsageError(`'${name}' needs --${option}`, command);
  return { command, values: parsed.values, args };
}

async function main(argv: string[]): Promise<number> {
  let parsed: Parsed | "help";
  try {
    parsed = parseCommandLine(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${err.command ? `usage: npm run cli -- ${err.command.usage}` : USAGE}`);
    return 2;
  }
  if (parsed === "help") {
    console.error(USAGE);
    return 0;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    // The configuration's problems, one line per variable (no stack: nothing went wrong in the code).
    console.error((err as Error).message);
    return 2;
  }
  configureDatabase(writePolicy);
  try {
    await migrate(sessionDatabaseUrl(config), (m) => console.error(m));
  } catch (err) {
    if (!(err instanceof DatabaseOpenError)) throw err;
    console.error(`${sessionDatabaseVariable(config)}: ${err.message}`);
    return 1;
  }
  await prepareDb();
  try {
    return await parsed.command.run(parsed.values, parsed.args);
  } finally {
    await disconnectDb();
  }
}

requestScope
  .run({ requestId: null, ip: null, actor: `cli:${userInfo().username}` }, () => main(process.argv.slice(2)))
  .then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof AdminError ? `error: ${err.message}` : err);
      process.exit(err instanceof AdminError ? 2 : 1);
    },
  );
