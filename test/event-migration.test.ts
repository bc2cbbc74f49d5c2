// The SQLite migration that rebuilds "Event" without its foreign key (20261125110607_event_ingest_paths)
// must keep what clients rely on: every event and its id, and the id sequence's high-water mark (an
// export cursor that passed an id must never see that id again, even after retention deleted the
// newest events' predecessors), and the hand-written partial indexes. Applied to a database built
// by the migrations before it, with events in it.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";

const DIR = join(import.meta.dirname, "..", "prisma", "migrations", "sqlite");
const TARGET = "20261125110607_event_ingest_paths";
const work = mkdtempSync(join(tmpdir(), "gg-migration-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

it("SQLite: rebuilding Event keeps its rows, ids and id sequence, and makes its indexes again", () => {
  const db = new Database(join(work, "events.db"));
  const names = readdirSync(DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const apply = (name: string) => db.transaction(() => db.exec(readFileSync(join(DIR, name, "migration.sql"), "utf8"))).immediate();
  for (const name of names.filter((n) => n < TARGET)) apply(name);

  db.exec(`INSERT INTO "Account" ("id", "name", "createdAt") VALUES ('a', 'A', 0)`);
  const insert = db.prepare(`INSERT INTO "Event" ("accountId", "type", "time", "endUserId", "flowId", "receivedAt") VALUES ('a', ?, ?, ?, ?, 0)`);
  for (let i = 1; i <= 5; i++) insert.run(i % 2 ? "flow_completed" : "flow_started", i, `u${i}`, `f${i}`);
  // Retention deleted the newest ones: the sequence (5) is now above the largest id left (2).
  db.exec(`DELETE FROM "Event" WHERE "id" > 2`);
  const before = db.prepare(`SELECT * FROM "Event" ORDER BY "id"`).all();

  apply(TARGET);

  expect(db.prepare(`SELECT * FROM "Event" ORDER BY "id"`).all()).toEqual(before);
  const { lastInsertRowid } = insert.run("flow_started", 6, "u6", "f6");
  expect(Number(lastInsertRowid)).toBe(6); // not 3: no id is handed out twice
  expect(db.prepare(`PRAGMA foreign_key_list("Event")`).all()).toEqual([]);
  const indexes = (db.prepare(`PRAGMA index_list("Event")`).all() as { name: string }[]).map((i) => i.name).sort();
  expect(indexes).toEqual(["Event_accountId_id_type_idx", "Event_accountId_type_time_idx", "Event_comments_idx", "Event_completions_idx"]);
  db.close();
});
