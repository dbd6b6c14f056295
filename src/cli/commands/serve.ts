import type { Command } from "commander";
import { ConfigError, resolveConfig, type Config } from "../../config.js";
import type { LogLevel } from "../../host/port.js";
import { FleetReplica } from "../../service/fleet.js";
import { safeUrl, StandaloneService } from "../../service/standalone.js";
import { isPostgresUrl } from "../../store/location.js";
import { databasePath, openForWriting } from "../database.js";
import { UsageError } from "../errors.js";
import { globals } from "../output.js";

function logLine(level: LogLevel, message: string, extra?: Record<string, unknown>): void {
  const details = extra && Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : "";
  process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${message}${details}\n`);
}

interface ServeOptions {
  url?: string;
  directory: string;
  name?: string;
  username?: string;
  password?: string;
  options?: string;
  silenceTimeout?: string;
}

/** OpenCode sends a heartbeat every 10 s; a shorter limit would replace healthy streams. */
function silenceMsOf(options: ServeOptions): number | undefined {
  if (options.silenceTimeout === undefined) return undefined;
  const seconds = Number(options.silenceTimeout);
  if (!Number.isFinite(seconds) || seconds <= 10)
    throw new UsageError(
      `--silence-timeout must be a number of seconds above OpenCode's 10 s heartbeat, got "${options.silenceTimeout}"`,
    );
  return Math.round(seconds * 1000);
}

/** The enforcer's options from --options; `location` (from --db) wins over its databasePath and the environment's. */
function configOf(options: ServeOptions, location: string | undefined): Config {
  let given: Record<string, unknown> = {};
  if (options.options !== undefined) {
    try {
      given = JSON.parse(options.options) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`--options is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof given !== "object" || given === null || Array.isArray(given))
      throw new UsageError(`--options must be a JSON object of options, such as '{"countdownSeconds":3}'`);
  }
  const env = location === undefined ? process.env : { ...process.env, TODO_CONTINUATION_DB: undefined };
  try {
    return resolveConfig(location === undefined ? given : { ...given, databasePath: location }, env);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** Runs until SIGINT or SIGTERM, then stops (handing leases back) and closes the database. */
function untilSignalled(stop: () => Promise<void>, close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      logLine("info", `${signal}: stopping, releasing leases`);
      void stop()
        .then(close)
        .then(resolve, (error: unknown) => {
          logLine("error", `while stopping: ${(error as Error).message}`);
          resolve();
        });
    };
    process.once("SIGINT", () => onSignal("SIGINT"));
    process.once("SIGTERM", () => onSignal("SIGTERM"));
  });
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description(
      "enforce from outside OpenCode: follow a running `opencode serve` over HTTP (--url), or, on PostgreSQL without --url, " +
        "be one replica of a fleet that shares the servers listed by `todo-continuation servers add`",
    )
    .option("--url <url>", "the OpenCode server, e.g. http://127.0.0.1:4096 (omit for fleet mode)")
    .option("--directory <dir>", "the project directory whose sessions to follow", process.cwd())
    .option("--name <server>", "name this server in the rows, when one database serves several (default: none)")
    .option("--username <name>", "basic-auth user (default: $OPENCODE_SERVER_USERNAME, else opencode)")
    .option("--password <password>", "basic-auth password (default: $OPENCODE_SERVER_PASSWORD)")
    .option("--options <json>", "enforcer options as JSON, as in the plugin entry (e.g. '{\"countdownSeconds\":3}')")
    .option(
      "--silence-timeout <seconds>",
      "replace an event stream that sent nothing for this long, heartbeats included (default 30)",
    )
    .action(async (options: ServeOptions, command: Command) => {
      const { db } = globals(command);
      const config = configOf(options, db === undefined ? undefined : databasePath(db));
      const location = config.databasePath;
      const silenceMs = silenceMsOf(options);
      if (options.url === undefined) return serveFleet(location, config, silenceMs);
      try {
        new URL(options.url);
      } catch {
        throw new UsageError(`--url must be a URL such as http://127.0.0.1:4096, got "${options.url}"`);
      }
      const store = await openForWriting(location, { busyTimeoutMs: config.busyTimeoutMs, kind: "service" });
      const service = new StandaloneService({
        url: options.url,
        directory: options.directory,
        username: options.username ?? process.env.OPENCODE_SERVER_USERNAME,
        password: options.password ?? process.env.OPENCODE_SERVER_PASSWORD,
        config,
        store,
        log: logLine,
        server: options.name ?? null,
        silenceMs,
      });
      await service.start();
      logLine(
        "info",
        `todo-continuation service running against ${safeUrl(options.url)} (database ${store.location}); Ctrl-C stops it`,
      );
      await untilSignalled(
        () => service.stop(),
        () => store.close(),
      );
    });
}

async function serveFleet(location: string, config: Config, silenceMs: number | undefined): Promise<void> {
  if (!isPostgresUrl(location))
    throw new UsageError(
      "serve needs --url <OpenCode server>, or a postgres:// database (--db) whose servers a fleet shares",
    );
  const store = await openForWriting(location, { busyTimeoutMs: config.busyTimeoutMs, kind: "fleet" });
  const liveness = await openForWriting(location, { busyTimeoutMs: config.busyTimeoutMs, kind: "fleet", poolSize: 2 });
  const replica = new FleetReplica({ store, liveness, config, log: logLine, silenceMs });
  await replica.start();
  const { following, replicas } = replica.stats();
  logLine(
    "info",
    `fleet replica ${replica.id} running (database ${store.location}, ${replicas} replica(s) alive, following ${following.length ? following.join(", ") : "none yet"}); Ctrl-C stops it`,
  );
  await untilSignalled(
    () => replica.stop(),
    async () => {
      await store.close();
      await liveness.close();
    },
  );
}
