// Wall-clock times in a named time zone, turned into instants with nothing but Intl: a provider says "resets 10pm
// (America/New_York)" or "reset at 2026-09-09 05:38:28" (China's time), and the park needs the epoch milliseconds.

/** A calendar date and time of day as a clock in some zone shows it. */
export interface WallTime {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's formatter, or undefined for a name Intl does not know. */
function formatterOf(timeZone: string): Intl.DateTimeFormat | undefined {
  let formatter = formatters.get(timeZone);
  if (formatter) return formatter;
  try {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    return undefined;
  }
  formatters.set(timeZone, formatter);
  return formatter;
}

export function isTimeZone(name: string): boolean {
  return formatterOf(name) !== undefined;
}

/** What the zone's clocks show at `epochMs`; undefined for an unknown zone. */
export function wallTimeAt(epochMs: number, timeZone: string): WallTime | undefined {
  const formatter = formatterOf(timeZone);
  if (!formatter) return undefined;
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(new Date(epochMs)))
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

function asUtc(t: WallTime): number {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

/**
 * The instant the zone's clocks show `wall`. Twice corrected, so a time near a daylight-saving change lands on the
 * offset in force then; a time the change skips comes out an hour later, as clocks would show it.
 */
export function instantOf(wall: WallTime, timeZone: string): number | undefined {
  const guess = asUtc(wall);
  const offsetAt = (epochMs: number) => {
    const shown = wallTimeAt(epochMs, timeZone);
    return shown === undefined ? undefined : asUtc(shown) - Math.floor(epochMs / 1000) * 1000;
  };
  const first = offsetAt(guess);
  if (first === undefined) return undefined;
  const second = offsetAt(guess - first)!;
  return guess - second;
}

/** The next time after `now` that the zone's clocks show hour:minute (today's, or tomorrow's once it has passed). */
export function nextTimeOfDay(hour: number, minute: number, timeZone: string, now: number): number | undefined {
  const today = wallTimeAt(now, timeZone);
  if (!today) return undefined;
  for (let days = 0; days <= 1; days++) {
    // Date.UTC carries a day past the month's end into the next month.
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + days));
    const at = instantOf(
      {
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
        hour,
        minute,
        second: 0,
      },
      timeZone,
    );
    if (at !== undefined && at > now) return at;
  }
  return undefined;
}
