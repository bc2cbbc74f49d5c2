// PostgreSQL settings for the current transaction only, in one statement: set_config's `is_local`
// is SET LOCAL, so the pooled connection (or PgBouncer's server connection) goes back with the
// server's defaults, and a statement of several set_config calls is one round trip instead of one
// per SET LOCAL. Used by Explore's questions and by the reports (their work_mem, no JIT, a timeout).
// Names and values come from the code, never from a request.

export function setLocalSql(settings: Record<string, string | number>): string {
  return `SELECT ${Object.entries(settings)
    .map(([name, value], i) => `set_config('${name}', '${value}', true) AS "s${i}"`)
    .join(", ")}`;
}
