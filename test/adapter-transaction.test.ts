// Bulk statements on the driver adapter's own transaction (src/db/adapterTransaction.ts): they are
// part of withTransaction's transaction (rolled back with it, committed with it, audited), only
// that transaction's client may send them that way, and once Prisma has ended the transaction (a
// timeout's rollback) nothing is sent outside it. And Prisma's debug history does not keep a bulk
// statement's rows after the transaction.
import { getLogs } from "@prisma/debug";
import { beforeAll, describe, expect, it } from "vitest";
import { createRows, updateRows } from "../src/audit/recorder.js";
import { adapterTransactionOf } from "../src/db/adapterTransaction.js";
import { dbKind, withTransaction } from "../src/db/index.js";
import { deleteWhere, selectWhere, uniqueInAccount } from "../src/db/insert.js";
import { newId } from "../src/ids.js";
import { prisma, type Tenant, tenant } from "./helpers.js";

let t: Tenant;
beforeAll(async () => {
  t = await tenant("adaptertx");
});

const tags = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: newId("t"), accountId: t.accountId, name: `${prefix}-${i}` }));
const names = async (prefix: string) =>
  (await prisma.tag.findMany({ where: { accountId: t.accountId, name: { startsWith: `${prefix}-` } }, orderBy: { name: "asc" } })).map((r) => r.name);
const audited = (ids: string[]) => prisma.auditLog.count({ where: { accountId: t.accountId, resourceType: "tag", resourceId: { in: ids } } });

describe("bulk statements on the adapter's transaction", () => {
  it("are taken only with the open transaction's own client", async () => {
    let outside: unknown = "unset";
    let inside: unknown;
    let nested: unknown;
    let seen: unknown;
    await withTransaction(async (tx) => {
      inside = adapterTransactionOf(tx);
      outside = adapterTransactionOf(prisma);
      // A savepoint rolled back leaves the transaction open.
      await tx.$executeRawUnsafe("SAVEPOINT gg_probe");
      await tx.$executeRawUnsafe("ROLLBACK TO SAVEPOINT gg_probe");
      expect(adapterTransactionOf(tx)).toBe(inside);
      nested = await withTransaction(async (tx2) => adapterTransactionOf(tx2));
      seen = tx;
    });
    expect(inside).toBeDefined();
    expect(nested).toBe(inside);
    expect(outside).toBeUndefined();
    // After the commit the transaction's client no longer reaches the adapter's transaction.
    expect(adapterTransactionOf(seen)).toBeUndefined();
  });

  it("roll back with the transaction and commit with it, with their audit entries", async () => {
    const rows = tags("rolled", 30);
    const err = await withTransaction(async (tx) => {
      expect(adapterTransactionOf(tx)).toBeDefined();
      expect(await createRows("Tag", rows, { skipDuplicates: true })).toBe(30);
      expect(await updateRows("Tag", [{ id: rows[0]!.id, accountId: t.accountId, name: "rolled-renamed" }])).toBe(1);
      throw new Error("changed my mind");
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe("changed my mind");
    expect(await names("rolled")).toEqual([]);
    expect(await audited(rows.map((r) => r.id))).toBe(0);

    const kept = tags("kept", 30);
    await withTransaction(async () => {
      expect(await createRows("Tag", kept, { skipDuplicates: true })).toBe(30);
      // A second insert of the same rows: every one collides and is skipped (RETURNING on the adapter).
      expect(await createRows("Tag", kept, { skipDuplicates: true })).toBe(0);
      expect(await updateRows("Tag", [{ id: kept[0]!.id, accountId: t.accountId, name: "kept-00-renamed" }])).toBe(1);
    });
    expect(await names("kept")).toHaveLength(30);
    expect(await names("kept")).toContain("kept-00-renamed");
    expect(await audited(kept.map((r) => r.id))).toBe(30);
  });

  it("are not sent once Prisma has ended the transaction (its timeout): nothing is written outside it", async () => {
    const rows = tags("late", 5);
    const err = await withTransaction(
      async () => {
        await new Promise((r) => setTimeout(r, 400));
        await createRows("Tag", rows, { skipDuplicates: true });
      },
      { timeout: 100 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 100));
    expect(await names("late")).toEqual([]);
    expect(await audited(rows.map((r) => r.id))).toBe(0);
  });

  it("leave nothing of their rows in Prisma's debug history after the transaction", async () => {
    const marker = `marker-${"m".repeat(2_000)}-${newId("x")}`;
    await withTransaction(async () => {
      await createRows("Tag", [{ id: newId("t"), accountId: t.accountId, name: marker.slice(0, 200) }], { skipDuplicates: true });
      await createRows("Tag", [{ id: newId("t"), accountId: t.accountId, name: `${marker.slice(0, 150)}-2` }], { skipDuplicates: true });
    });
    expect(getLogs(10_000_000)).not.toContain(marker.slice(0, 150));
  });
});

describe("reads and deletes by lists of ids in one statement (src/db/insert.ts selectWhere, deleteWhere)", () => {
  it("match exactly what Prisma's where would, answer null for a where they do not take, and delete inside the transaction", async () => {
    const rows = tags("where", 5);
    await withTransaction((tx) => tx.tag.createMany({ data: rows }));
    const ids = rows.map((r) => r.id);
    const where = { accountId: t.accountId, id: { in: [ids[0]!, ids[2]!, "no-such-id", ids[2]!] } };
    const viaPrisma = (await prisma.tag.findMany({ where, select: { id: true, name: true } })).map((r) => r.name).sort();
    const direct = await withTransaction((tx) => selectWhere(tx, dbKind(), "Tag", ["id", "name"], where));
    expect(direct!.map((r) => r.name).sort()).toEqual(viaPrisma);
    expect(viaPrisma).toEqual(["where-0", "where-2"]);
    // Another shape (an operator other than `in`, a number, a column that is no String, an empty where): null.
    for (const other of [{ name: { startsWith: "where" } }, { id: { in: [1] } }, { createdAt: "x" }, {}, null]) {
      expect(await withTransaction((tx) => selectWhere(tx, dbKind(), "Tag", ["id"], other))).toBeNull();
      expect(await withTransaction((tx) => deleteWhere(tx, dbKind(), "Tag", other))).toBeNull();
    }
    // An empty list matches nothing, as Prisma's `in: []`.
    expect(await withTransaction((tx) => selectWhere(tx, dbKind(), "Tag", ["id"], { accountId: t.accountId, id: { in: [] } }))).toEqual([]);
    // A delete rolled back with its transaction deletes nothing; committed, exactly the rows named.
    await expect(
      withTransaction(async (tx) => {
        expect(await deleteWhere(tx, dbKind(), "Tag", { accountId: t.accountId, id: { in: [ids[1]!] } })).toBe(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await names("where")).toEqual(["where-0", "where-1", "where-2", "where-3", "where-4"]);
    expect(await withTransaction((tx) => deleteWhere(tx, dbKind(), "Tag", { accountId: t.accountId, id: { in: [ids[1]!, ids[3]!] } }))).toBe(2);
    expect(await names("where")).toEqual(["where-0", "where-2", "where-4"]);
  });
});

describe("updates of rows that set different columns (src/db/insert.ts updateRows)", () => {
  it("give each row its own columns, whatever the order of rows and of their keys", async () => {
    const rows = tags("mixed", 4).map((r) => ({ ...r, description: "before" }));
    await withTransaction(async () => expect(await createRows("Tag", rows, { skipDuplicates: true })).toBe(4));
    const [a, b, c, d] = rows.map((r) => r.id);
    // Rows alternate between column sets, one with its keys in another order: every row lands in
    // the group of its own columns (a later row never inherits the previous row's).
    const changed = await withTransaction(() =>
      updateRows("Tag", [
        { id: a!, accountId: t.accountId, name: "mixed-a" },
        { id: b!, accountId: t.accountId, description: "b only" },
        { description: "c desc", id: c!, name: "mixed-c", accountId: t.accountId },
        { id: d!, accountId: t.accountId, name: "mixed-d", description: "d desc" },
      ]),
    );
    expect(changed).toBe(4);
    const stored = await prisma.tag.findMany({ where: { id: { in: [a!, b!, c!, d!] } }, select: { id: true, name: true, description: true } });
    expect(new Map(stored.map((r) => [r.id, [r.name, r.description]]))).toEqual(
      new Map([
        [a, ["mixed-a", "before"]],
        [b, ["mixed-1", "b only"]],
        [c, ["mixed-c", "c desc"]],
        [d, ["mixed-d", "d desc"]],
      ]),
    );
  });
});

describe("row locks' order (src/db/locks.ts lockRows)", () => {
  it("is the key's alone where a key names one row of an account, the key and the id where it can name several", () => {
    const keys = ["EndUser.externalId", "Tag.name", "Content.id", "Segment.id", "AttributeRecord.attributeValue"];
    expect(keys.map((k) => uniqueInAccount(k.split(".")[0]!, k.split(".")[1]!))).toEqual([true, true, true, true, false]);
  });
});
