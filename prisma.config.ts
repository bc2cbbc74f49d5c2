// Prisma CLI configuration. Prisma 6.19 runs its commands through the bundled WASM engine only when a
// driver adapter is named here; without one it tries to download a native engine (no network here).
// The adapter and schema follow DATABASE_URL, as the server's db module does.
import path from "node:path";
import type { PrismaConfig } from "prisma";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";

process.env.DATABASE_URL ??= "file:./data/guidegate.db";
const url = process.env.DATABASE_URL;
const postgres = /^postgres(ql)?:/.test(url);

export default {
  experimental: { adapter: true },
  engine: "js",
  schema: postgres ? path.join("prisma", "postgres", "schema.prisma") : path.join("prisma", "schema.prisma"),
  async adapter() {
    return postgres ? new PrismaPg({ connectionString: url }) : new PrismaBetterSQLite3({ url });
  },
} satisfies PrismaConfig;
