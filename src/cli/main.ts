#!/usr/bin/env node
// `todo-continuation`: the program, its global options and exit codes; its commands are listed in command-list.ts.
// Exit codes: 0 ok, 1 failure (explained on stderr), 2 usage error.
// Every call starts a process: what runs before the command is only what says what the commands take (commands/); a
// command's code, its database driver and the rest are imported when that command runs (actions/). zod too: under
// Node its CommonJS build, required by the first check that needs it, loads as fast as its ES module.
import { Command, CommanderError } from "commander";
import { registerCommands } from "./command-list.js";
import { CliError, UsageError } from "./errors.js";
import { examples } from "./output.js";
import { PACKAGE_VERSION } from "../package-version.js";

export function buildProgram(): Command {
  const program = new Command("todo-continuation")
    .description("Look into and control the durable todo-continuation enforcer of OpenCode.")
    .version(PACKAGE_VERSION, "--version", "print the version")
    // Every command's help lists --db and --json too: they work after any command.
    .configureHelp({ showGlobalOptions: true })
    .option(
      "--db <path>",
      "the SQLite file or a postgres:// URL (default: $TODO_CONTINUATION_DB, else $XDG_DATA_HOME/opencode/todo-continuation.db)",
    )
    .option("--json", "print JSON for scripts instead of tables")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .addHelpText(
      "after",
      examples(
        "todo-continuation status",
        "todo-continuation audit --session ses_4f2a… --limit 20",
        "todo-continuation --db postgres://tc@db.internal/tc history --json",
      ),
    );
  registerCommands(program);
  for (const command of program.commands) command.exitOverride().showHelpAfterError("(run with --help for usage)");
  return program;
}

export async function run(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(
      `todo-continuation: ${error instanceof CliError ? error.message : ((error as Error).stack ?? String(error))}\n`,
    );
    return 1;
  }
}

process.exitCode = await run(process.argv);
