// The replicas' /metrics read as the benchmark needs them: samples by name and labels, the difference between two
// scrapes of one replica, a histogram summed over replicas, and its quantiles as Prometheus's histogram_quantile
// computes them (linear within the bucket).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export type Scrape = Sample[];

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(LABEL)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

const key = (s: Sample) => `${s.name}{${JSON.stringify(s.labels)}}`;

/** `later` minus `earlier` (a series missing from `earlier` counts from 0): what happened between the two. */
export function difference(later: Scrape, earlier: Scrape | undefined): Scrape {
  const before = new Map((earlier ?? []).map((s) => [key(s), s.value]));
  return later.map((s) => ({ ...s, value: s.value - (before.get(key(s)) ?? 0) }));
}

/** The sum of a metric's samples whose labels include `where`. */
export function total(scrape: Scrape, name: string, where: Record<string, string> = {}): number {
  return scrape
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** A histogram's cumulative counts by upper bound, summed over every other label (and every scrape given). */
export function buckets(scrapes: Scrape[], histogram: string): Array<{ le: number; count: number }> {
  const byBound = new Map<number, number>();
  for (const scrape of scrapes)
    for (const s of scrape)
      if (s.name === `${histogram}_bucket`) {
        const le = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
        byBound.set(le, (byBound.get(le) ?? 0) + s.value);
      }
  return [...byBound].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** The q-quantile of a cumulative histogram; the last finite bound when it falls in +Inf; null when it is empty. */
export function quantile(q: number, cumulative: Array<{ le: number; count: number }>): number | null {
  const all = cumulative.at(-1)?.count ?? 0;
  if (all <= 0) return null;
  const rank = q * all;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const { le, count } of cumulative) {
    if (count >= rank) {
      if (le === Infinity) return lowerBound;
      if (count === lowerCount) return le;
      return lowerBound + ((le - lowerBound) * (rank - lowerCount)) / (count - lowerCount);
    }
    lowerBound = le;
    lowerCount = count;
  }
  return lowerBound;
}
