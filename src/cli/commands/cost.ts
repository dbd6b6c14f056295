import { InvalidArgumentError, type Command } from "commander";
import type { CostKey } from "../../store/operator/queries.js";
import { durationArg, examples } from "../output.js";

const KEYS: readonly CostKey[] = ["session", "day", "model"];

export function costCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples("todo-continuation cost --by day --since 7d", "todo-continuation cost --session ses_4f2a… --json"),
    )
    .description("what continuations cost: tokens, money and the todos they closed, by session, day or model")
    .option("--by <key>", `group by ${KEYS.join(", ")}`, (v) => {
      if (!(KEYS as readonly string[]).includes(v)) throw new InvalidArgumentError(`one of ${KEYS.join(", ")}.`);
      return v as CostKey;
    })
    .option("--since <duration>", "only the last <duration>, in whole UTC days (e.g. 1d, 7d, 30d)", (v) =>
      durationArg("--since", v, "1d, 7d or 30d"),
    )
    .option("--session <id>", "only this session");
}
