// Fixed values of the fixtures: dates, padded names and the lists' keyset order, so every run and both
// databases see the same rows (the seeded generator is src/seed/random.ts, shared with the seeders).
export const T0 = Date.UTC(2024, 0, 1);
export const MINUTE = 60_000;

export const pad = (i: number) => String(i).padStart(3, "0");

/** Keyset order used by the lists: by the key, then by id (both distinct in our fixtures). */
export const byKey =
  <T>(key: (row: T) => number | string) =>
  (a: T, b: T) => {
    const x = key(a),
      y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
