// How the CLI shows things to people: aligned columns, local times, durations a person reads at a glance.

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  align?: "left" | "right";
  /** Longer cells are clipped with an ellipsis. */
  max?: number;
}

export function table<T>(columns: Column<T>[], rows: T[]): string {
  const cells = rows.map((row) =>
    columns.map((c) => {
      const text = c.value(row).replace(/\s+/g, " ");
      return c.max && text.length > c.max ? `${text.slice(0, c.max - 1)}…` : text;
    }),
  );
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i]!.align === "right" ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join("\n");
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

export function localTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${(abs / 1000).toFixed(1)} s`;
  const s = Math.round(abs / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** "in 1.5 s" for a deadline ahead, "late by 3.2 s" for one behind. */
export function untilOrLate(deadline: number, now: number): string {
  return deadline >= now ? `in ${duration(deadline - now)}` : `late by ${duration(now - deadline)}`;
}

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** "90d", "12h", "30m", "45s", "2w", "1h30m" → milliseconds; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)\s*(ms|min|s|m|h|d|w)/g)];
  if (
    parts.length === 0 ||
    parts
      .map((p) => p[0])
      .join("")
      .replace(/\s/g, "") !== text.trim().replace(/\s/g, "")
  )
    return undefined;
  return parts.reduce((total, [, n, unit]) => total + Number(n) * UNITS[unit!]!, 0);
}
