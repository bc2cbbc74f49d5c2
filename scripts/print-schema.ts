// Writes schema.graphql: the printed schema, sorted so diffs stay readable. `npm run schema`.
// test/schema.test.ts fails when the committed file is out of date.
import { writeFileSync } from "node:fs";
import { printSchema } from "graphql";

process.env.DATABASE_URL ??= "file:./data/schema-print.db";
const { sortedSchema } = await import("../src/schema/index.js");
writeFileSync(new URL("../schema.graphql", import.meta.url), `${printSchema(sortedSchema())}\n`);
console.log("wrote schema.graphql");
process.exit(0);
