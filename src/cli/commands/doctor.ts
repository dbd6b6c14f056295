import type { Command } from "commander";
import { examples } from "../output.js";

export function doctorCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples("todo-continuation doctor", "todo-continuation --db postgres://tc@db.internal/tc doctor --json"),
    )
    .description(
      "check the plugin (on or off and why, its options and their sources), the config files and the database: file, schema version, integrity, leases, unsettled continuations, each notify channel's last success and error (exit 1 on a problem)",
    )
    .option("--directory <dir>", "the project whose plugin and configuration files to look at", process.cwd());
}
