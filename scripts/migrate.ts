// Applies pending migrations to DATABASE_URL (the server and the CLI also do this at start).
import { loadConfig, sessionDatabaseUrl } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";

const { applied } = await migrate(sessionDatabaseUrl(loadConfig()), (m) => console.log(m));
console.log(applied.length ? `${applied.length} migration(s) applied` : "database is up to date");
