// Values for the OpenAPI document's examples in the shapes the server gives them: ids as newId makes
// them (src/ids.ts), epoch-millisecond times of one real moment, cursors that decode. An example is
// an answer the server could send (test/openapi.test.ts checks them against their schemas and these
// shapes), so a reader or a generated mock learns the real format, not `"id-1"` and `1`.

/** 2024-06-10T06:13:20Z: the moment the examples happen at. */
export const EXAMPLE_TIME = 1_718_000_000_000;

/** An id as `newId(prefix)` makes it at EXAMPLE_TIME (`n` tells apart ids made in the same millisecond). */
export function exampleId(prefix: string, n = 0): string {
  return `${prefix}_${EXAMPLE_TIME.toString(36).padStart(9, "0")}${n.toString(36).padStart(4, "0")}${(0x1f2e3d4c + n).toString(16)}`;
}
