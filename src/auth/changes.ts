// Tells this process when what API keys may do has changed anywhere: a key revoked or created, a
// user or membership changed, an account's settings changed, by this process, another instance or
// the CLI. Database triggers raise the signal inside the writing transaction (migration
// 20261123170000_auth_change_signal), so nothing that writes those tables can forget it:
// - PostgreSQL: NOTIFY on `guidegate_auth`, delivered at commit; one LISTEN connection per process.
//   While it is down (start-up, a lost connection) the watcher says it cannot vouch for the cache,
//   and after reconnecting it reports a change, since notifications may have been missed meanwhile.
// - SQLite: the CLI and the server share the file; triggers bump a counter in "AuthVersion", read on
//   a read-only connection of its own at most every POLL_MS (a few microseconds a read).
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl } from "../config.js";
import { sqliteFile } from "../db/migrate.js";
import { logger } from "../logger.js";

export const AUTH_CHANNEL = "guidegate_auth";
/** SQLite: how often at most the counter is read (a revocation applies within this). */
export const POLL_MS = 250;

export interface AuthChangeWatcher {
  /**
   * Whether cached identities may be used now. Calls `onChange` first when a change happened since
   * the last call (SQLite reads its counter here, at most every POLL_MS). False while the watcher
   * cannot see changes (PostgreSQL's LISTEN connection is down).
   */
  check(): boolean;
  close(): Promise<void>;
}

export function watchAuthChanges(databaseUrl: string, onChange: () => void): AuthChangeWatcher {
  return isPostgresUrl(databaseUrl) ? listen(databaseUrl, onChange) : poll(databaseUrl, onChange);
}

function poll(databaseUrl: string, onChange: () => void): AuthChangeWatcher {
  let db: Database.Database | undefined;
  let read: (() => number | undefined) | undefined;
  let seen: number | undefined;
  let checkedAt = 0;
  return {
    check() {
      const now = Date.now();
      if (now - checkedAt < POLL_MS) return true;
      checkedAt = now;
      try {
        if (!read) {
          db = new Database(sqliteFile(databaseUrl), { readonly: true, fileMustExist: true });
          const stmt = db.prepare<[], { version: number }>('SELECT "version" FROM "AuthVersion" WHERE "id" = 1');
          read = () => stmt.get()?.version;
        }
        const version = read();
        if (version !== seen) {
          if (seen !== undefined) onChange();
          seen = version;
        }
        return true;
      } catch (err) {
        // Cannot see changes: do not trust the cache (every request looks its key up) until we can.
        logger.warn({ err }, "cannot read the auth change counter; the identity cache is bypassed");
        return false;
      }
    },
    async close() {
      db?.close();
      db = undefined;
      read = undefined;
    },
  };
}

function listen(databaseUrl: string, onChange: () => void): AuthChangeWatcher {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = 250;
  let timer: NodeJS.Timeout | undefined;

  const reconnectLater = () => {
    listening = false;
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs).unref();
    retryMs = Math.min(retryMs * 2, 10_000);
  };

  async function connect() {
    const c = new pg.Client({ connectionString: databaseUrl, application_name: "guidegate-auth-listener" });
    client = c;
    c.on("notification", (msg) => {
      if (msg.channel === AUTH_CHANNEL) onChange();
    });
    c.on("error", (err) => {
      logger.warn({ err }, "auth change listener lost its connection; reconnecting (identity cache bypassed meanwhile)");
      void c.end().catch(() => {});
      reconnectLater();
    });
    c.on("end", () => {
      if (client === c) reconnectLater();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${AUTH_CHANNEL}`);
      if (closed) return void (await c.end());
      // Whatever changed while nobody listened is unknown: start from an empty cache.
      onChange();
      listening = true;
      retryMs = 250;
    } catch (err) {
      if (closed) return;
      logger.warn({ err }, "auth change listener could not connect; retrying (identity cache bypassed meanwhile)");
      void c.end().catch(() => {});
      reconnectLater();
    }
  }
  void connect();

  return {
    check: () => listening,
    async close() {
      closed = true;
      listening = false;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
