/**
 * "Did you mean …?" for a mistyped value (a column name, a list type): the candidates closest to
 * what was typed, by edit distance (a transposition counts as one edit), as commander suggests
 * commands and options.
 */

/** Damerau-Levenshtein distance (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) d[i] = [i];
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidates nearest to `input` (case-insensitive), at most `max`, best first; none when
 * nothing is close (more than 40% of the input's length away, or more than 3 edits).
 */
export function similar(input: string, candidates: readonly string[], max = 3): string[] {
  const key = input.trim().toLowerCase();
  if (key === '') return [];
  const limit = Math.min(3, Math.max(1, Math.floor(key.length * 0.4)));
  const scored: Array<{ c: string; d: number }> = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    if (seen.has(c)) continue;
    seen.add(c);
    const d = editDistance(key, c.toLowerCase());
    if (d > 0 && d <= limit) scored.push({ c, d });
  }
  scored.sort((x, y) => x.d - y.d);
  return scored.slice(0, max).map((s) => s.c);
}

/** ` (did you mean X?)`, ` (did you mean X, Y?)`, or nothing. */
export function didYouMean(input: string, candidates: readonly string[], max = 3): string {
  const found = similar(input, candidates, max);
  return found.length ? ` (did you mean ${found.join(', ')}?)` : '';
}
