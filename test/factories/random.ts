// Deterministic fixtures: a seeded generator (mulberry32) and fixed dates, so every run and both
// databases see the same rows.
export const T0 = Date.UTC(2024, 0, 1);
export const MINUTE = 60_000;

export function seeded(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (n: number) => Math.floor(next() * n);
  /** `k` distinct items of `list`. */
  const sample = <T>(list: readonly T[], k: number): T[] => shuffle(list).slice(0, k);
  const shuffle = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  return { next, int, sample, shuffle };
}

export const pad = (i: number) => String(i).padStart(3, "0");

/** Keyset order used by the lists: by the key, then by id (both distinct in our fixtures). */
export const byKey =
  <T>(key: (row: T) => number | string) =>
  (a: T, b: T) => {
    const x = key(a),
      y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
