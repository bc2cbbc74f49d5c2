// Default deny: every Prisma model is classified for the audit log by the domain that owns it, a
// model left out stops the database module from opening (so the server does not start), and a write
// to a model without a classification fails instead of going unrecorded.
import { afterEach, describe, expect, it } from "vitest";
import { classificationProblems, exempt } from "../src/audit/classification.js";
import { configureAudit } from "../src/audit/recorder.js";
import { type Db, dbKind, FREE_WRITES, prisma, withTransaction } from "../src/db/index.js";
import { auditClassification } from "../src/domains/audit.js";
import { Prisma } from "../src/generated/sqlite/client.js";
import { newId } from "../src/ids.js";
import { tenant } from "./helpers.js";

/** The client with its write methods: the exported type has none outside withTransaction(); these tests check that run time refuses them as well. */
const writable = prisma as unknown as Db;

afterEach(() => configureAudit(auditClassification, dbKind()));

describe("audit classification", () => {
  it("classifies every model of the schema, and nothing else; children hang off audited models", () => {
    expect(classificationProblems(Object.values(Prisma.ModelName), auditClassification)).toEqual([]);
    expect(Object.keys(auditClassification).sort()).toEqual([...Object.values(Prisma.ModelName)].sort());
  });

  it("types as writable outside transactions exactly the models the audit lets write there (FREE_WRITES)", () => {
    const free = Object.entries(auditClassification)
      .filter(([, c]) => c.kind === "exempt" || (c.kind === "audited" && c.bookkeeping))
      .map(([model]) => model);
    expect([...FREE_WRITES].sort()).toEqual(free.sort());
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
    configureAudit(withoutTag, dbKind());
    await expect(withTransaction((tx) => tx.tag.create({ data: { id: newId("t"), accountId: t.accountId, name: "unclassified" } }))).rejects.toThrow(
      /model Tag is not classified/,
    );
    configureAudit(auditClassification, dbKind());
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it("lets an exempt model be written anywhere, without an entry", async () => {
    const t = await tenant("class");
    configureAudit({ ...auditClassification, Tag: exempt("test: pretend tags were derived data") }, dbKind());
    await writable.tag.create({ data: { id: newId("t"), accountId: t.accountId, name: "exempt" } });
    configureAudit(auditClassification, dbKind());
    expect(await prisma.tag.count({ where: { accountId: t.accountId } })).toBe(1);
    expect(await prisma.auditLog.count({ where: { accountId: t.accountId, resourceType: "tag" } })).toBe(0);
  });
});
