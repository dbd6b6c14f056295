// Why a parked session was woken, in the words its continuation carries after the header: the limit that lifted,
// the time the model asked for and its reason, or the check that passed (or never did) with its last lines. The
// check's output is the outside world's text: each line is indented under a bar, so none can start a line of ours.
import type { ParkReason, WakeCause } from "./reasons.js";

export type WokenBecause =
  | { kind: "limit"; resetAt?: number }
  | { kind: "time"; reason: string }
  | { kind: "check_passed"; reason: string; command: string; output: string }
  | { kind: "check_timed_out"; reason: string; command: string; output: string }
  | { kind: "person" };

/** At most this many of the check's last lines, each cut to this many characters. */
export const MAX_OUTPUT_LINES = 20;
export const MAX_OUTPUT_LINE_CHARS = 200;

/** The check's last lines (`maxLines` of them at most), trimmed and indented: `    | line`. */
export function quotedOutput(output: string, maxLines = MAX_OUTPUT_LINES): string {
  const lines = output.replace(/\r\n?/g, "\n").replace(/\n+$/, "").split("\n");
  const last = lines.slice(-maxLines).map((line) => {
    const clipped = line.length > MAX_OUTPUT_LINE_CHARS ? `${line.slice(0, MAX_OUTPUT_LINE_CHARS)}…` : line;
    return `    | ${clipped}`;
  });
  if (lines.length > maxLines) last.unshift(`    | … (${lines.length - maxLines} earlier lines)`);
  return output.trim() === "" ? "    | (no output)" : last.join("\n");
}

export function wakeNote(cause: WokenBecause): string {
  switch (cause.kind) {
    case "limit":
      return "Woken: the provider's limit has reset. Carry on where the failed turn stopped.";
    case "time":
      return `Woken: the time you asked to wait for has come (you were waiting for: ${JSON.stringify(cause.reason)}).`;
    case "check_passed":
      return (
        `Woken: your check passed (you were waiting for: ${JSON.stringify(cause.reason)}).\n` +
        `Check: ${JSON.stringify(cause.command)} exited 0. Its last lines:\n${quotedOutput(cause.output)}`
      );
    case "check_timed_out":
      return (
        `Woken: the time ran out before your check passed (you were waiting for: ${JSON.stringify(cause.reason)}).\n` +
        `Check: ${JSON.stringify(cause.command)} had not exited 0. Its last lines:\n${quotedOutput(cause.output)}\n` +
        "Decide whether to wait again (continue_later) or ask the person."
      );
    case "person":
      return "Woken early by the person: carry on with the open todos.";
  }
}

/** What woke a park, as its continuation says it: from the park's reason and terms, and the cause of its wake. */
export function wokenBecause(
  park: { reason: ParkReason; detail: Record<string, unknown>; checkCommand: string | null },
  cause: WakeCause,
  checkOutput = "",
): WokenBecause {
  if (cause === "command" || cause === "palette") return { kind: "person" };
  const asked = typeof park.detail.asked === "string" ? park.detail.asked : "";
  if (park.reason !== "agent") {
    const resetAt = park.detail.resetAt;
    return typeof resetAt === "number" ? { kind: "limit", resetAt } : { kind: "limit" };
  }
  if (park.checkCommand === null) return { kind: "time", reason: asked };
  const check = { reason: asked, command: park.checkCommand, output: checkOutput };
  return cause === "check" ? { kind: "check_passed", ...check } : { kind: "check_timed_out", ...check };
}

/** The note a session's row keeps (`wake_note`), read back; undefined for none or one that does not parse. */
export function readWakeNote(json: string | null | undefined): WokenBecause | undefined {
  if (!json) return undefined;
  try {
    const parsed = JSON.parse(json) as WokenBecause;
    return typeof parsed?.kind === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
}
