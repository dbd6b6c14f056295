// Why a parked session was woken, in the words its continuation carries after the header: the limit that lifted,
// the time the model asked for and its reason, or the check that passed (or never did) with its last lines. The
// check's output is the outside world's text: each line is indented under a bar, so none can start a line of ours.

export type WakeCause =
  | { kind: "limit"; resetAt?: number }
  | { kind: "time"; reason: string }
  | { kind: "check_passed"; reason: string; command: string; output: string }
  | { kind: "check_timed_out"; reason: string; command: string; output: string }
  | { kind: "person" };

/** At most this many of the check's last lines, each cut to this many characters. */
export const MAX_OUTPUT_LINES = 20;
export const MAX_OUTPUT_LINE_CHARS = 200;

/** The check's last lines, trimmed and indented: `    | line`. */
export function quotedOutput(output: string): string {
  const lines = output.replace(/\r\n?/g, "\n").replace(/\n+$/, "").split("\n");
  const last = lines.slice(-MAX_OUTPUT_LINES).map((line) => {
    const clipped = line.length > MAX_OUTPUT_LINE_CHARS ? `${line.slice(0, MAX_OUTPUT_LINE_CHARS)}…` : line;
    return `    | ${clipped}`;
  });
  if (lines.length > MAX_OUTPUT_LINES) last.unshift(`    | … (${lines.length - MAX_OUTPUT_LINES} earlier lines)`);
  return output.trim() === "" ? "    | (no output)" : last.join("\n");
}

export function wakeNote(cause: WakeCause): string {
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
