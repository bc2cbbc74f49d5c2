// Every status an expected failure can carry maps to a stable GraphQL code a client can branch on,
// never the generic "ERROR" (src/errors.ts).
import { STATUS_CODES } from "node:http";
import { describe, expect, it } from "vitest";
import { AppError, codeOf } from "../src/errors.js";

describe("AppError codes", () => {
  it("names each 4xx and 5xx status: ours, else the status's own name", () => {
    expect([400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503].map(codeOf)).toEqual([
      "BAD_REQUEST",
      "UNAUTHENTICATED",
      "FORBIDDEN",
      "NOT_FOUND",
      "CONFLICT",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
      "UNPROCESSABLE_CONTENT",
      "RATE_LIMITED",
      "INTERNAL_SERVER_ERROR",
      "SERVICE_UNAVAILABLE",
    ]);
    expect(codeOf(410)).toBe("GONE");
    for (const status of Object.keys(STATUS_CODES)
      .map(Number)
      .filter((s) => s >= 400))
      expect(new AppError(status, "x").extensions.code, String(status)).toMatch(/^[A-Z][A-Z0-9_]+$/);
    // A code of its own wins (MAX_COST_EXCEEDED, EXPLORE_TIMEOUT).
    expect(new AppError(422, "x", undefined, undefined, { code: "EXPLORE_TIMEOUT" }).extensions).toMatchObject({
      code: "EXPLORE_TIMEOUT",
      http: { status: 422 },
    });
  });
});
