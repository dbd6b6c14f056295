// Ids in OpenCode 1.18.33's format: a prefix, 12 hex digits of (ms × 4096 + a counter) — ascending for messages,
// parts and events, the complement for sessions so that the newest sorts first — and 14 base62 characters.
// A message's ids are made from one number (its stamp) when they are rendered, so that a stored turn holds numbers,
// not a dozen strings; the tail is a hash of the stamp salted per process, so two sim processes never make the same id.

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SPAN = 2 ** 48;
const SALT = Math.floor(Math.random() * 2 ** 31);

let lastMs = 0;
let counter = 0;

/**
 * `count` consecutive stamps, the first returned: the ms×4096+counter of OpenCode's ids, never repeating within the
 * process even when more than 4096 are taken in one millisecond.
 */
export function reserveStamps(count = 1, now = Date.now()): number {
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  }
  const first = lastMs * 4096 + counter;
  counter += count;
  return first;
}

function hex12(value: number): string {
  return (value % SPAN).toString(16).padStart(12, "0");
}

/** 14 base62 characters from the stamp: a cheap integer hash (no allocation beyond the string). */
function tail(stamp: number): string {
  let h = (Math.floor(stamp / 4096) ^ SALT) >>> 0;
  let l = ((stamp % 4096) * 2654435761 + SALT) >>> 0;
  let out = "";
  for (let i = 0; i < 14; i++) {
    h = Math.imul(h ^ (h >>> 15), 2246822507) + l;
    l = Math.imul(l ^ (l >>> 13), 3266489909) + i;
    out += BASE62[((h ^ l) >>> 0) % 62];
  }
  return out;
}

/** An ascending id (`msg`, `prt`, `evt`) of a stamp. */
export function ascendingId(prefix: string, stamp: number): string {
  return `${prefix}_${hex12(stamp)}${tail(stamp)}`;
}

/** A session id: the complement of the stamp, so that newer sessions sort first. */
export function descendingId(prefix: string, stamp: number): string {
  return `${prefix}_${hex12(SPAN - 1 - (stamp % SPAN))}${tail(stamp)}`;
}

/** A fresh ascending id. */
export function newAscendingId(prefix: string, now = Date.now()): string {
  return ascendingId(prefix, reserveStamps(1, now));
}
