import { InvalidArgumentError, type Command } from "commander";
import { didYouMean } from "../../core/nearest.js";
import { NOTICE_STATES, type NoticeState } from "../../store/notices/states.js";
import { examples, positiveIntegerArg } from "../output.js";

function stateArg(value: string): NoticeState {
  if ((NOTICE_STATES as readonly string[]).includes(value)) return value as NoticeState;
  throw new InvalidArgumentError(`one of ${NOTICE_STATES.join(", ")}${didYouMean(value, NOTICE_STATES)}.`);
}

export function noticesCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples("todo-continuation notices --state failed", "todo-continuation notices --session ses_4f2a… --json"),
    )
    .description(
      "the notices sent (or pending, failed, folded) to each notify channel, with their tries and last error, newest first",
    )
    .option("--session <id>", "only this session")
    .option("--state <state>", `only this state (${NOTICE_STATES.join(", ")})`, stateArg)
    .option("--limit <n>", "how many of the newest to show", (v) => positiveIntegerArg("--limit", v), 50);
}
