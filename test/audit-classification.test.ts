// Default deny: every Prisma model is classified for the audit log by the domain that owns it, a
// model left out stops the database layer from taking the classification (so the server does not
// start), and a write to a model without a classification, or before the process handed one over,
// fails instead of going unrecorded.
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { classificationProblems, exempt, writableOutsideTransactions } from "../src/audit/classification.js";
import { configureAudit } from "../src/audit/recorder.js";
import { configureDatabase, type Db, dbKind, prisma, type Reader, withTransaction } from "../src/db/index.js";
import { writePolicy } from "../src/domains/index.js";
import { Prisma } from "../src/generated/sqlite/client.js";
import { newId } from "../src/ids.js";
import { tenant } from "./helpers.js";

/** The client with its write methods: the exported type has none outside withTransaction(); these tests check that run time refuses them as well. */
const writable = prisma as unknown as Db;

const auditClassification = writePolicy.classification;
/** The process's policy with another classification. */
const withClassification = (classification: typeof auditClassification) => ({ ...writePolicy, classification });

afterEach(() => configureAudit(writePolicy, dbKind()));

describe("audit classification", () => {
  it("classifies every model of the schema, and nothing else; children hang off audited models", () => {
    expect(classificationProblems(Object.values(Prisma.ModelName), auditClassification)).toEqual([]);
    expect(Object.keys(auditClassification).sort()).toEqual([...Object.values(Prisma.ModelName)].sort());
  });

  it("types as writable outside transactions what the audit lets write there: exempt models and bookkeeping writes", () => {
    // The type (src/db FreeWrites) is derived from the domains' classifications by the same rule as run time.
    const free = (model: string) => writableOutsideTransactions(auditClassification[model]!);
    expect([free("Event"), free("ApiKey"), free("Tag"), free("ContentTag"), free("AuditLog")]).toEqual([true, true, false, false, false]);
    expectTypeOf<Reader["event"]>().toHaveProperty("create");
    expectTypeOf<Reader["apiKey"]>().toHaveProperty("update");
    expectTypeOf<Reader["tag"]>().not.toHaveProperty("create");
    expectTypeOf<Reader["contentTag"]>().not.toHaveProperty("createMany");
    expectTypeOf<Reader["auditLog"]>().not.toHaveProperty("create");
  });

  it("names what is missing or wrong", () => {
    const { Tag: _tag, ...withoutTag } = auditClassification;
    expect(classificationProblems(Object.values(Prisma.ModelName), withoutTag)).toEqual([
      "model Tag is not classified for the audit log (add it to its domain's audit.ts)",
    ]);
    expect(classificationProblems(Object.values(Prisma.ModelName), { ...auditClassification, Content: exempt("test") })).toEqual([
      "ContentTag is a child of Content, which is not an audited model",
    ]);
  });

  it("refuses a write to a model without a classification, inside a transaction too; nothing written", async () => {
    const t = await tenant("class");
    const { Tag: _tag, ...withoutTag } = auditClassification;
    configureAudit(withClassification(withoutTag), dbKind());
    await expect(withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name: "unclassified" } }))).rejects.toThrow(
      /model Tag is not classified/,
    );
    configureAudit(writePolicy, dbKind());
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("lets an exempt model be written anywhere, without an entry", async () => {
    const t = await tenant("class");
    configureAudit(withClassification({ ...auditClassification, Tag: exempt("test: pretend tags were derived data") }), dbKind());
    await writable.tag.create({ data: { id: newId("t"), accountId: t.accountId, name: "exempt" } });
    configureAudit(writePolicy, dbKind());
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(1);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, resourceType: "tag" } })).toBe(0);
  });

  it("refuses an incomplete classification when it is handed over, and every write until one is", async () => {
    const { Tag: _tag, ...withoutTag } = auditClassification;
    expect(() => configureDatabase(withClassification(withoutTag))).toThrow(/audit classification incomplete:\n {2}model Tag is not classified/);
    expect(() => configureDatabase({ ...writePolicy, fastInsert: new Set(["Nothing"]) })).toThrow(/fastInsert names Nothing/);
    const t = await tenant("class");
    configureAudit(undefined, dbKind());
    await expect(withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name: "early" } }))).rejects.toThrow(
      /the database layer has no audit classification/,
    );
    await expect(writable.event.deleteMany({ where: { accountId: t.accountId } })).rejects.toThrow(/has no audit classification/);
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
  });
});
