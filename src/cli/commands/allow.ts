import type { Command } from "commander";
import { examples, positiveAmountArg, positiveIntegerArg } from "../output.js";

export function allowCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation allow ses_4f2a…                      # as much again as it had",
        "todo-continuation allow ses_4f2a… --continuations 10",
        "todo-continuation allow ses_4f2a… --cost 0.50 --tokens 200000",
      ),
    )
    .description(
      "allow a session more than its budgets, until your next message in it or a resume, and lift a budget stop " +
        "(with no amount: as many continuations as it sent since your last message, and what they cost and used)",
    )
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .option("--continuations <n>", "continuations beyond maxContinuations", (v) =>
      positiveIntegerArg("--continuations", v),
    )
    .option(
      "--cost <amount>",
      "cost beyond maxContinuationCost, and for this session beyond dailyContinuationCost",
      (v) => positiveAmountArg("--cost", v),
    )
    .option("--tokens <n>", "tokens beyond maxContinuationTokens", (v) => positiveIntegerArg("--tokens", v));
}
