import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // One copy of graphql: vitest would otherwise load the ESM and CJS builds side by side.
    alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }],
  },
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup/database.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: "test" },
  },
});
