// Explore against the contract's "Explore" section, rule by rule, where the other Explore tests left
// a gap: what GET /openapi.json says the three routes answer. (test/explore-cost.test.ts gets a real
// 422 of a question past EXPLORE_TIMEOUT_MS on each database.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requester, type Server, startServer } from "./helpers.js";

let server: Server;
const req = requester(() => server);

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

describe("Explore in GET /openapi.json", () => {
  it("documents the 422 problem each question answers past EXPLORE_TIMEOUT_MS", async () => {
    const doc = (await req("/openapi.json")).body;
    for (const name of ["query", "funnel", "retention"]) {
      const response = doc.paths[`/v1/accounts/{accountId}/analytics/${name}`].post.responses[422];
      expect(response, `${name}: 422 documented`).toBeDefined();
      expect(response.description).toMatch(/EXPLORE_TIMEOUT_MS.*narrow it/);
      expect(response.content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
      expect(response.content["application/problem+json"].example).toMatchObject({ type: "about:blank", title: "Unprocessable Entity", status: 422 });
    }
  });
});
