// mulberry32: a small seeded PRNG, so random tests are reproducible and a
// failure can be replayed by seed.
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (xs) => xs[int(xs.length)];
  const str = (alphabet, max) => Array.from({ length: int(max + 1) }, () => pick(alphabet)).join('');
  return { next, int, pick, str, chance: (p) => next() < p };
}
