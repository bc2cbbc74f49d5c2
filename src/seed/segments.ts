// Demo integration attributes and a segment, so B16/B17–B23 answer with data on a fresh install:
// an attribute schema (company, region, seats), four company records, the end users' `company` and
// `plan` values, and the segment "EMEA gold" ordering five contents. Written once: a second seed
// finds the schema and adds nothing.
import { withTransaction } from "../db/index.js";
import { newId } from "../ids.js";

const COMPANIES = [
  { name: "acme", region: "emea", seats: 250 },
  { name: "globex", region: "amer", seats: 40 },
  { name: "initech", region: "emea", seats: 75 },
  { name: "umbrella", region: "apac", seats: 1200 },
];

export const DEMO_SEGMENT = "EMEA gold";
export const DEMO_SEGMENT_RULE = {
  and: [
    { field: "custom.plan", op: "eq", value: "gold" },
    { field: "attribute.company.region", op: "eq", value: "emea" },
  ],
};

const textValue = (text: string) => ({ type: "string", text, num: null, bool: null, time: null });

export async function seedDemoSegments(accountId: string, contentIds: string[]): Promise<void> {
  await withTransaction(async (tx) => {
    if (await tx.attributeField.count({ where: { accountId } })) return;
    const now = new Date();
    await tx.attributeField.createMany({
      data: [
        { accountId, name: "company", type: "string", description: "The customer company (primary attribute)." },
        { accountId, name: "region", type: "string", description: "Sales region of the company." },
        { accountId, name: "seats", type: "double", description: "Licensed seats." },
      ],
    });
    const records = COMPANIES.map((c) => ({ ...c, id: newId("ia") }));
    await tx.attributeRecord.createMany({
      data: records.map((r) => ({
        id: r.id,
        accountId,
        attributeName: "company",
        attributeValue: r.name,
        createdAt: now,
        updatedAt: now,
        updatedBy: "system:seed",
      })),
    });
    await tx.attributeRecordValue.createMany({
      data: records.flatMap((r) => [
        { recordId: r.id, accountId, name: "region", ...textValue(r.region) },
        { recordId: r.id, accountId, name: "seats", type: "double", text: null, num: r.seats, bool: null, time: null },
      ]),
    });
    // The end users get a company and a plan: the link from a user to its company's record.
    for (const name of ["company", "plan"]) {
      if (!(await tx.endUserField.findUnique({ where: { accountId_name: { accountId, name } } })))
        await tx.endUserField.create({
          data: { accountId, name, type: "string", description: name === "plan" ? "Subscription plan." : "The user's company." },
        });
    }
    const users = await tx.endUser.findMany({ where: { accountId }, select: { id: true }, orderBy: { externalId: "asc" } });
    await tx.endUserValue.deleteMany({ where: { accountId, field: { in: ["company", "plan"] } } });
    if (users.length) {
      await tx.endUserValue.createMany({
        data: users.flatMap((u, i) => [
          { endUserId: u.id, accountId, field: "company", ...textValue(COMPANIES[i % COMPANIES.length]!.name) },
          { endUserId: u.id, accountId, field: "plan", ...textValue(i % 3 === 0 ? "gold" : "silver") },
        ]),
      });
    }
    const segmentId = newId("seg");
    await tx.segment.create({
      data: { id: segmentId, accountId, name: DEMO_SEGMENT, rule: JSON.stringify(DEMO_SEGMENT_RULE), createdAt: now, updatedAt: now },
    });
    await tx.segmentContent.createMany({ data: contentIds.slice(0, 5).map((contentId, position) => ({ segmentId, contentId, position })) });
  });
}
