// The committed schema.graphql must be the printed, sorted schema: run `npm run schema` after
// changing a type.
import { readFileSync } from "node:fs";
import { printSchema } from "graphql";
import { expect, it } from "vitest";
import { sortedSchema } from "../src/schema/index.js";

it("schema.graphql is up to date (npm run schema)", () => {
  const committed = readFileSync(new URL("../schema.graphql", import.meta.url), "utf8");
  expect(committed).toBe(`${printSchema(sortedSchema())}\n`);
});
