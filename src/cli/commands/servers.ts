// `todo-continuation servers add|list|remove`: the OpenCode servers a fleet of `serve` replicas follows (PostgreSQL).
import type { Command } from "commander";
import { examples, globals } from "../output.js";

export interface AddServerOptions {
  url: string;
  directory: string;
  name?: string;
  username?: string;
  passwordEnv?: string;
}

export function registerServers(program: Command): void {
  const servers = program
    .command("servers")
    .addHelpText("after", examples("todo-continuation --db postgres://tc@db.internal/tc servers list"))
    .description("the OpenCode servers a fleet of `serve --db postgres://…` replicas follows");
  registerAdd(servers);
  registerList(servers);
  registerRemove(servers);
}

function registerAdd(servers: Command): void {
  servers
    .command("add")
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
    .option("--password-env <VAR>", "the environment variable that holds its password on every replica")
    .action(async (options: AddServerOptions, command: Command) =>
      (await import("../actions/servers.js")).addServer(options, globals(command)),
    );
}

function registerList(servers: Command): void {
  servers
    .command("list")
    .addHelpText("after", examples("todo-continuation --db postgres://tc@db.internal/tc servers list --json"))
    .description("the listed servers, who follows each and how fresh its event stream is")
    .action(async (_options: unknown, command: Command) =>
      (await import("../actions/servers.js")).listServers(globals(command)),
    );
}

function registerRemove(servers: Command): void {
  servers
    .command("remove")
    .addHelpText("after", examples("todo-continuation --db postgres://tc@db.internal/tc servers remove pod-a"))
    .description("stop following a server; its follower lets it go within a round (its history stays)")
    .argument("<name>", "the server's name, as `servers list` shows it")
    .action(async (name: string, _options: unknown, command: Command) =>
      (await import("../actions/servers.js")).removeServer(name, globals(command)),
    );
}
