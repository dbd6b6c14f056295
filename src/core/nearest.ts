// "Did you mean …?": the known word a mistyped one most likely meant, for the messages that refuse an unknown option
// key, audit reason or the like.

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate closest to `word` (case aside), when it is close enough to be a slip rather than another word: at most
 * a third of the longer word's letters apart (and at least one edit allowed), or one contains the other whole.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const known = candidate.toLowerCase();
    const distance = known.includes(typed) || typed.includes(known) ? 0.5 : editDistance(typed, known);
    const allowed = Math.max(1, Math.floor(Math.max(typed.length, known.length) / 3));
    if (distance <= allowed && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** " (did you mean x?)", or nothing when no candidate is near. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = nearest(word, candidates);
  return match ? ` (did you mean ${match}?)` : "";
}
