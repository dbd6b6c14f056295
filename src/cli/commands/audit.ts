import { InvalidArgumentError, type Command } from "commander";
import { didYouMean } from "../../core/nearest.js";
import { AUDIT_EVENTS, AUDIT_VOCABULARY } from "../../core/reasons.js";
import { durationArg, examples, positiveIntegerArg } from "../output.js";

/** Every reason an audit row may carry, whatever its event. */
const REASONS = [...new Set(Object.values(AUDIT_VOCABULARY).flat())].filter((r): r is string => r !== null).sort();

/** A reason the trail never records would only ever match nothing: refused, with the nearest one. */
function reasonArg(value: string): string {
  if (REASONS.includes(value)) return value;
  throw new InvalidArgumentError(
    `no audit row carries that reason${didYouMean(value, REASONS)}. The reasons: ${REASONS.join(", ")}.`,
  );
}

export function auditCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation audit --reason stagnation --since 7d",
        "todo-continuation audit --session ses_4f2a… --event skipped --json",
      ),
    )
    .description("every decision (armed, cancelled, skipped, fired, injected, …) with its reason, newest last")
    .option("--session <id>", "only this session")
    .option("--reason <reason>", "only this reason (e.g. stagnation, user_message)", reasonArg)
    .option("--event <event>", `only this event (${AUDIT_EVENTS.join(", ")})`, (v) => {
      if (!(AUDIT_EVENTS as readonly string[]).includes(v))
        throw new InvalidArgumentError(`one of ${AUDIT_EVENTS.join(", ")}${didYouMean(v, AUDIT_EVENTS)}.`);
      return v;
    })
    .option("--since <duration>", "only the last <duration> (e.g. 30m, 12h, 7d)", (v) =>
      durationArg("--since", v, "30m, 12h or 7d"),
    )
    .option("--limit <n>", "how many of the newest to show", (v) => positiveIntegerArg("--limit", v), 100);
}
