import { randomBytes } from "node:crypto";

/** Random ids with a readable prefix: `cd_…` countdowns, `inj_…` injections. */
export function newId(prefix: "cd" | "inj"): string {
  return `${prefix}_${randomBytes(9).toString("base64url")}`;
}
