// The row-shape check of the bulk paths (src/db/insert.ts sameColumns): a multi-row INSERT needs
// every row to name the same columns, in any order; a row with one more or one fewer column is
// refused (the audited createMany then goes through Prisma instead, or insertRows throws).
import { describe, expect, it } from "vitest";
import { sameColumns } from "../src/db/insert.js";

describe("sameColumns", () => {
  it("accepts rows with the same keys in any order, undefined values included", () => {
    expect(sameColumns([])).toBe(true);
    expect(sameColumns([{ a: 1 }])).toBe(true);
    expect(
      sameColumns([
        { a: 1, b: 2 },
        { b: 3, a: 4 },
        { a: undefined, b: null },
      ]),
    ).toBe(true);
  });

  it("refuses a row with a missing, an extra or a different key, wherever it is", () => {
    expect(sameColumns([{ a: 1, b: 2 }, { a: 1 }])).toBe(false);
    expect(sameColumns([{ a: 1 }, { a: 1, b: 2 }])).toBe(false);
    expect(
      sameColumns([
        { a: 1, b: 2 },
        { a: 1, b: 2 },
        { a: 1, c: 2 },
      ]),
    ).toBe(false);
    const rows = Array.from({ length: 50_000 }, (_, i) => ({ id: i, field: "plan", text: "pro" }));
    expect(sameColumns(rows)).toBe(true);
    rows[49_999] = { id: 1, field: "plan", text: "pro", extra: 1 } as (typeof rows)[number];
    expect(sameColumns(rows)).toBe(false);
  });

  it("counts own keys only", () => {
    const inherited = Object.assign(Object.create({ b: 2 }), { a: 1 });
    expect(sameColumns([{ a: 1 }, inherited])).toBe(true);
    expect(sameColumns([{ a: 1, b: 2 }, inherited])).toBe(false);
  });
});
