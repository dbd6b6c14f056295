// When a limit lifts, as a provider or a client says it in words: "Please try again in 6.379s", "resets in 2h 13m",
// "try again at 3:00 PM", "resets 10pm (America/New_York)", "Your limit will reset at 2026-09-09 05:38:28",
// "You will regain access on 2026-09-01 at 00:00 UTC", "Claude AI usage limit reached|1777936568". The shapes and
// their sources: docs/research/provider-limits.md.
import { instantOf, isTimeZone, nextTimeOfDay } from "./zoned-time.js";

/** A reset read from text: when, and the words it was read from (for the audit row). */
export interface TextReset {
  at: number;
  said: string;
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
};
const UNIT = "(?:ms|milliseconds?|secs?|seconds?|s|mins?|minutes?|m|hrs?|hours?|h|days?|d|weeks?|w)";
/** Not followed by a letter: Go's compact "6m0s" has a digit after each unit, "5 messages" is no duration. */
const AMOUNT = `\\d+(?:\\.\\d+)?\\s*${UNIT}(?![a-z])`;
/** "2h 13m", "2 days, 3 hours and 5 minutes", "1m30s", "6.379s". */
const DURATION = `${AMOUNT}(?:\\s*(?:,|and)?\\s*${AMOUNT})*`;

/** Words after which a duration is the wait: "try again in", "resets in", "retrying in ~", "wait". */
const WAIT_THEN_DURATION = new RegExp(
  `\\b(?:try(?:ing)? again|retry(?:ing)?|resets?|reset(?:ting)?|available(?: again)?|regain access|wait(?:ing)?)\\b[^.\\n\\d]{0,16}?~?\\s*(${DURATION})`,
  "i",
);

/** The milliseconds a duration such as "2h 13m" or "1m30s" names. */
export function durationMs(text: string): number | undefined {
  let total = 0;
  let found = false;
  for (const [, amount, unit] of text.matchAll(new RegExp(`(\\d+(?:\\.\\d+)?)\\s*(${UNIT})(?![a-z])`, "gi"))) {
    const name = unit!.toLowerCase();
    const ms = UNIT_MS[name] ?? UNIT_MS[name.replace(/s$/, "")];
    if (ms === undefined) return undefined;
    total += Number(amount) * ms;
    found = true;
  }
  return found ? Math.ceil(total) : undefined;
}

/** "Claude AI usage limit reached|1777936568": Claude Code's machine form, epoch seconds (or ms). */
const CLAUDE_MACHINE = /usage limit reached\|(\d{9,13})\b/i;

/** A calendar date and time: "2026-09-09 05:38:28", "2026-09-09T05:38:28Z", "2026-09-01 at 00:00 UTC". */
const DATE_TIME =
  /(\d{4})-(\d{2})-(\d{2})(?:[T ]|\s+at\s+)(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z\b|UTC\b|GMT\b|[+-]\d{2}:?\d{2}\b)?/i;

/** "resets 10pm (America/New_York)", "try again at 3:00 PM", "reset at 12:50am (UTC)". */
const TIME_OF_DAY =
  /\b(?:resets?|reset at|again at|available at|until)\b[^\d\n.]{0,12}?(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?=[\s.,;)!(]|$)\s*(?:\(\s*([A-Za-z]+(?:\/[A-Za-z0-9_+-]+)+|UTC|GMT)\s*\)|(UTC|GMT)\b)?/i;

/** Z.AI's GLM Coding Plan writes its reset times in China's time without saying so. */
const CHINA_TIME = /usage limit reached for \d+ (?:hour|day|week|month)|您的限额将在/i;

function offsetMs(zone: string): number {
  if (/^(z|utc|gmt)$/i.test(zone)) return 0;
  const [, sign, hours, minutes] = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  return (sign === "-" ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000;
}

function hour24(hour: number, meridiem: string | undefined): number | undefined {
  if (!meridiem) return hour <= 23 ? hour : undefined;
  if (hour < 1 || hour > 12) return undefined;
  const pm = meridiem.toLowerCase().startsWith("p");
  return (hour % 12) + (pm ? 12 : 0);
}

/**
 * The first reset the text names, as an instant. `localZone` is the zone of a time said without one (the machine's,
 * where the person reads it). Undefined when the text names none.
 */
export function resetInText(text: string, now: number, localZone: string): TextReset | undefined {
  const machine = CLAUDE_MACHINE.exec(text);
  if (machine) {
    const value = Number(machine[1]);
    return { at: value > 1e12 ? value : value * 1000, said: machine[0] };
  }

  const dated = DATE_TIME.exec(text);
  if (dated) {
    const [said, year, month, day, hour, minute, second, zone] = dated;
    const wall = {
      year: Number(year),
      month: Number(month),
      day: Number(day),
      hour: Number(hour),
      minute: Number(minute),
      second: Number(second ?? 0),
    };
    const at =
      zone !== undefined
        ? Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - offsetMs(zone)
        : instantOf(wall, CHINA_TIME.test(text) ? "Asia/Shanghai" : localZone);
    if (at !== undefined && Number.isFinite(at)) return { at, said: said.trim() };
  }

  const waited = WAIT_THEN_DURATION.exec(text);
  if (waited) {
    const ms = durationMs(waited[1]!);
    if (ms !== undefined) return { at: now + ms, said: waited[0].trim() };
  }

  const clock = TIME_OF_DAY.exec(text);
  if (clock) {
    const [said, hourText, minuteText, meridiem, namedZone, bareZone] = clock;
    // A bare number ("resets 5") is no time of day: it needs a.m./p.m. or minutes.
    if (meridiem !== undefined || minuteText !== undefined) {
      const hour = hour24(Number(hourText), meridiem);
      const minute = Number(minuteText ?? 0);
      const named = namedZone ?? bareZone;
      const zone = named === undefined ? localZone : /^(utc|gmt)$/i.test(named) ? "UTC" : named;
      if (hour !== undefined && minute < 60 && isTimeZone(zone)) {
        const at = nextTimeOfDay(hour, minute, zone, now);
        if (at !== undefined) return { at, said: said.trim() };
      }
    }
  }
  return undefined;
}
