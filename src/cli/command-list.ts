// Every command of `todo-continuation`, once: its name, what it takes (commands/: its arguments, options, their checks,
// its help) and what it does (actions/), in the order the help lists them. main.ts registers them from here, the tests
// run each one's help (test/cli/conventions.test.ts) and fail when docs/cli.md or the README leaves one out
// (test/docs/cli.test.ts).
// Every call of the CLI is a process of its own: it loads every command's definition (to parse the call and answer
// --help) but only the action of the command it runs, imported here when that command runs
// (test/cli/startup.test.ts). An action owns its options' type, and no definition imports an action: the two sides
// meet only here.
import type { Command } from "commander";
import { allowCommand } from "./commands/allow.js";
import { auditCommand } from "./commands/audit.js";
import { costCommand } from "./commands/cost.js";
import { dashboardCommand } from "./commands/dashboard.js";
import { doctorCommand } from "./commands/doctor.js";
import { historyCommand } from "./commands/history.js";
import { migrateCommand } from "./commands/migrate.js";
import { noticesCommand } from "./commands/notices.js";
import { unparkCommand, wakeCommand } from "./commands/park.js";
import { pruneCommand } from "./commands/prune.js";
import { serveCommand } from "./commands/serve.js";
import { addServerCommand, listServersCommand, removeServerCommand, serversCommand } from "./commands/servers.js";
import { statusCommand } from "./commands/status.js";
import { resumeCommand, stopCommand } from "./commands/stop-resume.js";
import { globals, type GlobalOptions } from "./output.js";

/** What a command does: given its arguments and its options as commander parsed them, then the global options. */
type Action<Parsed extends unknown[]> = (...args: [...Parsed, GlobalOptions]) => Promise<void>;

export type CliCommand = {
  /** As typed after `todo-continuation` (a subcommand: after its group's name). */
  name: string;
  /** Adds the command's arguments, options, their checks and its help. */
  define: (command: Command) => Command;
} & ({ run: (parsed: unknown[], options: GlobalOptions) => Promise<void> } | { subcommands: readonly CliCommand[] });

function command<Parsed extends unknown[]>(
  name: string,
  define: (command: Command) => Command,
  action: () => Promise<Action<Parsed>>,
): CliCommand {
  // What commander parsed comes untyped: the action's parameter types are what its definition promises.
  return { name, define, run: async (parsed, options) => (await action())(...(parsed as Parsed), options) };
}

export const COMMANDS: readonly CliCommand[] = [
  command("history", historyCommand, async () => (await import("./actions/history.js")).history),
  command("audit", auditCommand, async () => (await import("./actions/audit.js")).audit),
  command("cost", costCommand, async () => (await import("./actions/cost.js")).cost),
  command("notices", noticesCommand, async () => (await import("./actions/notices.js")).notices),
  command("status", statusCommand, async () => (await import("./actions/status.js")).status),
  command("stop", stopCommand, async () => (await import("./actions/stop-resume.js")).stop),
  command("resume", resumeCommand, async () => (await import("./actions/stop-resume.js")).resume),
  command("allow", allowCommand, async () => (await import("./actions/allow.js")).allow),
  command("wake", wakeCommand, async () => (await import("./actions/park.js")).wake),
  command("unpark", unparkCommand, async () => (await import("./actions/park.js")).unpark),
  command("migrate", migrateCommand, async () => (await import("./actions/migrate.js")).migrate),
  command("doctor", doctorCommand, async () => (await import("./actions/doctor.js")).doctor),
  command("prune", pruneCommand, async () => (await import("./actions/prune.js")).prune),
  command("serve", serveCommand, async () => (await import("./actions/serve.js")).serve),
  command("dashboard", dashboardCommand, async () => (await import("./actions/dashboard.js")).dashboard),
  {
    name: "servers",
    define: serversCommand,
    subcommands: [
      command("add", addServerCommand, async () => (await import("./actions/servers.js")).addServer),
      command("list", listServersCommand, async () => (await import("./actions/servers.js")).listServers),
      command("remove", removeServerCommand, async () => (await import("./actions/servers.js")).removeServer),
    ],
  },
];

/** Adds the commands to `parent` (the program, or a group), each running its action when called. */
export function registerCommands(parent: Command, commands: readonly CliCommand[] = COMMANDS): void {
  for (const entry of commands) {
    const added = entry.define(parent.command(entry.name));
    if ("subcommands" in entry) registerCommands(added, entry.subcommands);
    else
      // commander hands an action its arguments, its options, then the command itself.
      added.action(async (...given: unknown[]) => entry.run(given.slice(0, -1), globals(given.at(-1) as Command)));
  }
}

/** Every command as typed after `todo-continuation`, groups and their subcommands included ("servers add"). */
export function commandPaths(commands: readonly CliCommand[] = COMMANDS, prefix = ""): string[] {
  return commands.flatMap((entry) => {
    const path = `${prefix}${entry.name}`;
    return "subcommands" in entry ? [path, ...commandPaths(entry.subcommands, `${path} `)] : [path];
  });
}
