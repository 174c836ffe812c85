/**
 * The approximate string match PostgREST uses for its "Perhaps you meant …" hints (the fuzzyset algorithm, as in
 * fuzzyset.js): entries and the query are lower-cased, stripped to letters, digits, spaces and commas and wrapped in
 * `-`; their n-gram count vectors are compared by cosine similarity (n = 3 first, then 2, the first size with a hit
 * wins), the best 50 are re-scored with the normalised Levenshtein similarity of the lower-cased strings, and the
 * best score at or above `minScore` is the answer. An entry equal to the query (ignoring case) scores 1.
 */

function grams(value: string, size: number): Map<string, number> {
  const norm = `-${[...value.toLowerCase()].filter((c) => /[\p{L}\p{N}\s,]/u.test(c)).join('')}-`;
  const out = new Map<string, number>();
  for (let i = 0; i + size <= norm.length; i++) {
    const g = norm.slice(i, i + size);
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

const magnitude = (v: Map<string, number>): number => Math.sqrt([...v.values()].reduce((s, n) => s + n * n, 0));

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** 1 − distance / longer length (1 for two empty strings). */
export function similarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - levenshtein(a, b) / longer;
}

/** The entry closest to `query`, or null when none scores at least `minScore` (PostgREST: 0.75 for names, 0.33 otherwise). */
export function closestMatch(entries: readonly string[], query: string, minScore: number): string | null {
  const byKey = new Map<string, string>();
  for (const e of entries) if (!byKey.has(e.toLowerCase())) byKey.set(e.toLowerCase(), e);
  const key = query.toLowerCase();
  const exact = byKey.get(key);
  if (exact !== undefined) return exact;
  for (const size of [3, 2]) {
    const q = grams(key, size);
    const qMag = magnitude(q);
    const scored: Array<[number, string]> = [];
    for (const entry of byKey.keys()) {
      const v = grams(entry, size);
      let dot = 0;
      for (const [g, n] of q) dot += n * (v.get(g) ?? 0);
      if (dot > 0) scored.push([dot / (qMag * magnitude(v)), entry]);
    }
    scored.sort((x, y) => y[0] - x[0]);
    const rescored = scored.slice(0, 50).map(([, entry]): [number, string] => [similarity(key, entry), entry]);
    rescored.sort((x, y) => y[0] - x[0]);
    const hits = rescored.filter(([score]) => score >= minScore);
    if (hits.length > 0) return byKey.get(hits[0]![1])!;
  }
  return null;
}
