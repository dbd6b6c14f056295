import type { Command } from "commander";
import { allowedWords, liftedWords } from "../../core/explain.js";
import { allow, type Grant } from "../../store/changes/allow.js";
import { sessionRow } from "../../store/reads.js";
import { withStore } from "../database.js";
import { examples, globals, positiveAmountArg, positiveIntegerArg, print, printJson, snakeCased } from "../output.js";
import { requireSeen, scopeOf } from "./stop-resume.js";

export function registerAllow(program: Command): void {
  program
    .command("allow")
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
    .option("--tokens <n>", "tokens beyond maxContinuationTokens", (v) => positiveIntegerArg("--tokens", v))
    .action(async (sessionId: string, options: Grant, command: Command) => {
      const grant = { continuations: options.continuations, cost: options.cost, tokens: options.tokens };
      const { db, json } = globals(command);
      // A running enforcer of the session's directory looks at it within a lease tick (~5 s): see changes/allow.ts.
      const { changed, granted, lifted, stopped } = await withStore(db, async (store) => {
        await requireSeen(store, db, sessionId, "");
        const allowed = await store.change(allow(await scopeOf(store, sessionId, undefined), grant, "cli", Date.now()));
        return { ...allowed, stopped: (await store.read(sessionRow(sessionId)))?.stoppedAt != null };
      });
      if (json) return printJson(snakeCased({ sessionId, changed, granted, lifted, stopped }));
      if (!changed) return print(`${sessionId}: nothing to allow`);
      const what = liftedWords(lifted);
      const next = what
        ? `lifted ${what}; a running enforcer looks at it again within seconds`
        : "it counts until your next message in it or a resume";
      const held = stopped ? `; it is still stopped: \`todo-continuation resume ${sessionId}\` lifts that` : "";
      print(`allowed ${allowedWords(granted)} to ${sessionId}; ${next}${held}`);
    });
}
