// The one seeded random generator of the seeders (./demo.ts, ./events.ts, bench/) and the test
// factories (test/factories): the same seed gives the same numbers on every run and database.

/** mulberry32: small, fast, deterministic; numbers in [0, 1). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** rng(seed) with the draws the seeders and factories make of it. */
export function seeded(seed: number) {
  const next = rng(seed);
  /** An integer in [0, n). */
  const int = (n: number) => Math.floor(next() * n);
  /** One item of `list`. */
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  /** True with probability `p`. */
  const chance = (p: number) => next() < p;
  const shuffle = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  /** `k` distinct items of `list`. */
  const sample = <T>(list: readonly T[], k: number): T[] => shuffle(list).slice(0, k);
  return { next, int, pick, chance, shuffle, sample };
}
