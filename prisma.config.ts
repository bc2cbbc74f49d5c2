// Prisma CLI configuration (Prisma 7): the schema and datasource follow DATABASE_URL, as the
// server's db module does. The server and the CLI connect through driver adapters (src/db), and
// migrations are applied by our own runner (src/db/migrate.ts), so the CLI only generates clients.
import path from "node:path";
import { defineConfig } from "prisma/config";

const url = process.env.DATABASE_URL ?? "file:./data/guidegate.db";
const postgres = /^postgres(ql)?:/.test(url);

export default defineConfig({
  schema: postgres ? path.join("prisma", "postgres", "schema.prisma") : path.join("prisma", "schema.prisma"),
  datasource: { url },
});
