// `todo-continuation servers add|list|remove`: the OpenCode servers a fleet of `serve` replicas follows (PostgreSQL).
import type { Command } from "commander";
import { examples } from "../output.js";

export function serversCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation --db postgres://tc@db.internal/tc servers list"))
    .description("the OpenCode servers a fleet of `serve --db postgres://…` replicas follows");
}

export function addServerCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation --db postgres://tc@db.internal/tc servers add --url http://pod-a:4096 --directory /workspace --name pod-a",
      ),
    )
    .description("list a server for the fleet; a replica takes it over within a round")
    .requiredOption("--url <url>", "the OpenCode server, e.g. http://10.0.0.7:4096")
    .requiredOption("--directory <dir>", "the project directory whose sessions to follow (as OpenCode sees it)")
    .option("--name <name>", "how rows name this server (default: the URL's host:port)")
    .option("--username <name>", "basic-auth user (default: opencode when a password is set)")
    .option("--password-env <VAR>", "the environment variable that holds its password on every replica");
}

export function listServersCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation --db postgres://tc@db.internal/tc servers list --json"))
    .description("the listed servers, who follows each and how fresh its event stream is");
}

export function removeServerCommand(command: Command): Command {
  return command
    .addHelpText("after", examples("todo-continuation --db postgres://tc@db.internal/tc servers remove pod-a"))
    .description("stop following a server; its follower lets it go within a round (its history stays)")
    .argument("<name>", "the server's name, as `servers list` shows it");
}
