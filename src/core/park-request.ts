// What the model asks for when it calls `continue_later`: a reason, a time (`minutes` from now or an ISO 8601 `at`),
// and optionally a `check` command polled every `checkEveryMinutes`. Read strictly: a call that cannot be honoured
// gets an error the model can read and act on, never a silent park. Whether the check may run at all is the agent's
// permissions' to say (host/), not this reader's.

export interface ParkRequestLimits {
  now: number;
  maxParkHours: number;
}

/** A park the model asked for, checked. */
export interface AgentPark {
  reason: string;
  /** When it wakes (without a check: the time asked for; with one: at the latest). */
  until: number;
  check?: { command: string; everyMs: number };
}

export type ParkRequestReading = { ok: true; park: AgentPark } | { ok: false; error: string };

export const MIN_PARK_MINUTES = 0.25;
/** A check is run at most this often, whatever the model asks. */
export const MIN_CHECK_EVERY_MINUTES = 0.25;
/** Without `checkEveryMinutes`, a check runs this often. */
export const DEFAULT_CHECK_EVERY_MINUTES = 1;
export const MAX_REASON_LENGTH = 500;
export const MAX_CHECK_LENGTH = 2000;

/** An ISO 8601 date and time, with seconds and an offset or Z optional; a bare date is no time. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

/** V8 reads 2026-02-31 as 3 March: the date and the time of day must exist as written. */
function onTheCalendar(iso: string): boolean {
  const [year, month, day, hour, minute] = iso.split(/[-T :]/i, 5).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60;
}

const refuse = (error: string): ParkRequestReading => ({ ok: false, error });

function untilOf(args: Record<string, unknown>, limits: ParkRequestLimits): number | string {
  const { minutes, at } = args;
  if (minutes !== undefined && at !== undefined) return "give `minutes` or `at`, not both";
  if (minutes === undefined && at === undefined) return "say when: `minutes` (from now) or `at` (an ISO 8601 time)";
  if (minutes !== undefined) {
    if (typeof minutes !== "number" || !Number.isFinite(minutes))
      return `\`minutes\` must be a number (got ${JSON.stringify(minutes)})`;
    if (minutes < MIN_PARK_MINUTES) return `\`minutes\` must be at least ${MIN_PARK_MINUTES} (got ${minutes})`;
    return limits.now + Math.round(minutes * 60_000);
  }
  if (typeof at !== "string" || !ISO_8601.test(at.trim()))
    return `\`at\` must be an ISO 8601 time such as 2026-12-07T15:04:00Z (got ${JSON.stringify(at)})`;
  const instant = Date.parse(at.trim());
  if (!Number.isFinite(instant) || !onTheCalendar(at.trim()))
    return `\`at\` is not a time that exists (got ${JSON.stringify(at)})`;
  if (instant <= limits.now) return `\`at\` is in the past (${at}); give a time to come`;
  return instant;
}

export function readParkRequest(raw: unknown, limits: ParkRequestLimits): ParkRequestReading {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return refuse("the arguments must be an object");
  const args = raw as Record<string, unknown>;
  const reason = typeof args.reason === "string" ? args.reason.trim() : "";
  if (reason === "") return refuse("`reason` is required: say what the session waits for");
  if (reason.length > MAX_REASON_LENGTH) return refuse(`\`reason\` is longer than ${MAX_REASON_LENGTH} characters`);

  const until = untilOf(args, limits);
  if (typeof until === "string") return refuse(until);
  const maxMs = limits.maxParkHours * 3_600_000;
  if (until - limits.now > maxMs)
    return refuse(`that is more than maxParkHours (${limits.maxParkHours} h) away; wait less, or ask the person`);

  const park: AgentPark = { reason, until };
  const { check, checkEveryMinutes } = args;
  if (check === undefined) {
    if (checkEveryMinutes !== undefined) return refuse("`checkEveryMinutes` needs a `check` command");
    return { ok: true, park };
  }
  if (typeof check !== "string" || check.trim() === "") return refuse("`check` must be a shell command");
  if (check.length > MAX_CHECK_LENGTH) return refuse(`\`check\` is longer than ${MAX_CHECK_LENGTH} characters`);
  if (check.includes("\u0000")) return refuse("`check` must not contain a NUL character");
  const every = checkEveryMinutes ?? DEFAULT_CHECK_EVERY_MINUTES;
  if (typeof every !== "number" || !Number.isFinite(every) || every < MIN_CHECK_EVERY_MINUTES)
    return refuse(`\`checkEveryMinutes\` must be a number of at least ${MIN_CHECK_EVERY_MINUTES}`);
  return { ok: true, park: { ...park, check: { command: check, everyMs: Math.round(every * 60_000) } } };
}
