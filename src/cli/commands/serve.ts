import type { Command } from "commander";
import { ConfigError, resolveConfig } from "../../config.js";
import type { LogLevel } from "../../host/port.js";
import { safeUrl, StandaloneService } from "../../service/standalone.js";
import { databasePath, openForWriting } from "../database.js";
import { UsageError } from "../errors.js";
import { globals } from "../output.js";

function logLine(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
  const details = extra && Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : "";
  process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${message}${details}\n`);
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("enforce from outside OpenCode: follow a running `opencode serve` over HTTP (no plugin needed)")
    .requiredOption("--url <url>", "the OpenCode server, e.g. http://127.0.0.1:4096")
    .option("--directory <dir>", "the project directory whose sessions to follow", process.cwd())
    .option("--username <name>", "basic-auth user (default: $OPENCODE_SERVER_USERNAME, else opencode)")
    .option("--password <password>", "basic-auth password (default: $OPENCODE_SERVER_PASSWORD)")
    .option("--options <json>", "enforcer options as JSON, as in the plugin entry (e.g. '{\"countdownSeconds\":3}')")
    .action(
      async (
        options: { url: string; directory: string; username?: string; password?: string; options?: string },
        command: Command,
      ) => {
        const { db } = globals(command);
        try {
          new URL(options.url);
        } catch {
          throw new UsageError(`--url must be a URL such as http://127.0.0.1:4096, got "${options.url}"`);
        }
        let config;
        try {
          const given = options.options ? (JSON.parse(options.options) as Record<string, unknown>) : {};
          config = resolveConfig({ ...given, ...(db ? { databasePath: db } : {}) }, process.env);
        } catch (error) {
          throw new UsageError(
            error instanceof ConfigError ? error.message : `--options is not valid JSON: ${(error as Error).message}`,
          );
        }
        const store = await openForWriting(databasePath(config.databasePath), config.busyTimeoutMs, "service");
        const service = new StandaloneService({
          url: options.url,
          directory: options.directory,
          username: options.username ?? process.env.OPENCODE_SERVER_USERNAME,
          password: options.password ?? process.env.OPENCODE_SERVER_PASSWORD,
          config,
          store,
          log: logLine,
        });
        await service.start();
        logLine(
          "info",
          `todo-continuation service running against ${safeUrl(options.url)} (database ${store.location}); Ctrl-C stops it`,
        );
        await new Promise<void>((resolve) => {
          const stop = (signal: string) => {
            logLine("info", `${signal}: stopping, releasing leases`);
            void service
              .stop()
              .then(() => store.close())
              .then(resolve);
          };
          process.once("SIGINT", () => stop("SIGINT"));
          process.once("SIGTERM", () => stop("SIGTERM"));
        });
      },
    );
}
