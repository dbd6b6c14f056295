import { randomBytes } from "node:crypto";

/**
 * Random ids with a readable prefix: `cd_…` countdowns, `inj_…` injections, `ntc_…` notices, `park_…` parks, `ver_…`
 * runs of the `verify` command.
 */
export function newId(prefix: "cd" | "inj" | "ntc" | "park" | "ver"): string {
  return `${prefix}_${randomBytes(9).toString("base64url")}`;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
let lastMs = 0;
let counter = 0;

/**
 * A message id in OpenCode's own format (`msg_` + 12 hex digits of ms×4096+counter + 14 base62 characters), so the
 * prompt can be sent with an id the enforcer knows in advance: its own message is recognised from the first event.
 */
export function newMessageId(now = Date.now()): string {
  if (now !== lastMs) {
    lastMs = now;
    counter = 0;
  }
  counter++;
  const stamp = (BigInt(now) * 4096n + BigInt(counter)).toString(16).padStart(12, "0").slice(-12);
  const random = randomBytes(14);
  let tail = "";
  for (const byte of random) tail += BASE62[byte % 62];
  return `msg_${stamp}${tail}`;
}
