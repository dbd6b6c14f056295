import type { NoticeChannels } from "../../engine/notice-sender.js";
import { channelsFrom } from "../../notices/sending.js";
import { ConfigError, resolveConfiguration, type Config } from "../../config/resolve.js";
import type { FleetReplica } from "../../service/fleet.js";
import { serviceLog, type Log, type LogFormat } from "../../service/log.js";
import { observeStore } from "../../service/observed-store.js";
import type { StandaloneService } from "../../service/standalone.js";
import type { Listen, Readiness } from "../../service/status-server.js";
import { describeDatabaseFailure } from "../../store/open/failure.js";
import { countParked } from "../../store/reads.js";
import { isPostgresUrl } from "../../store/open/location.js";
import type { EngineStore } from "../../store/port.js";
import { databasePath, openForWriting } from "../database.js";
import { listenFor } from "./service-page.js";
import { UsageError } from "../errors.js";
import type { GlobalOptions } from "../output.js";

export interface ServeOptions {
  url?: string;
  directory: string;
  name?: string;
  username?: string;
  password?: string;
  options?: string;
  silenceTimeout?: string;
  listen?: Listen;
  /** The page's access token on a --listen address other than loopback. */
  dashboardToken?: string;
  logFormat: LogFormat;
}

/** How long `/readyz` waits for the database's answer before it says the database does not answer. */
const READY_PROBE_MS = 2000;

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

/**
 * The enforcer's options: --options over the configuration files of the followed directory (its .opencode/ and the
 * user's), as the plugin reads them; `location` (from --db) wins over every databasePath and the environment's.
 */
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
  const env = location === undefined ? process.env : { ...process.env, TODO_CONTINUATION_DB: location };
  const { config, problems } = resolveConfiguration({ options: given, env, directory: options.directory, files: true });
  if (!config) throw new UsageError(new ConfigError(problems).message);
  return config;
}

/** Runs until SIGINT or SIGTERM, then stops (handing leases back) and closes the database. */
function untilSignalled(log: Log, stop: () => Promise<void>, close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log("info", `${signal}: stopping, releasing leases`);
      void stop()
        .then(close)
        .then(resolve, (error: unknown) => {
          log("error", `while stopping: ${(error as Error).message}`);
          resolve();
        });
    };
    process.once("SIGINT", () => onSignal("SIGINT"));
    process.once("SIGTERM", () => onSignal("SIGTERM"));
  });
}

/** The metrics and prom-client, which keeps them: loaded for --listen only. */
async function metricsOf(options: ServeOptions) {
  return options.listen ? (await import("../../service/metrics.js")).Metrics : undefined;
}

export async function serve(options: ServeOptions, { db }: GlobalOptions): Promise<void> {
  const config = configOf(options, db === undefined ? undefined : databasePath(db));
  const silenceMs = silenceMsOf(options);
  const log = serviceLog(options.logFormat);
  const noticeChannels = channelsFrom(config.notify, options.directory, (problem) => log("error", problem));
  if (options.url === undefined) return serveFleet(config, silenceMs, options, log, noticeChannels);
  return serveOne(options.url, config, silenceMs, options, log, noticeChannels);
}

/** The standalone service: one OpenCode server followed by this process. */
async function serveOne(
  url: string,
  config: Config,
  silenceMs: number | undefined,
  options: ServeOptions,
  log: Log,
  noticeChannels: NoticeChannels,
): Promise<void> {
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url must be a URL such as http://127.0.0.1:4096, got "${url}"`);
  }
  // The service's code (the engine, OpenCode's SDK) once the arguments are known to be right: a usage error is quick.
  const { StandaloneService, safeUrl } = await import("../../service/standalone.js");
  const Metrics = await metricsOf(options);
  const opened = await openForWriting(config.databasePath, { busyTimeoutMs: config.busyTimeoutMs, kind: "service" });
  let service: StandaloneService | undefined;
  const stopping = () => service?.mode === "stopping" || service?.mode === "stopped";
  const readiness = async (): Promise<Readiness> => {
    if (stopping()) return { ready: false, reason: "stopping" };
    if (!service || service.mode === "idle" || service.mode === "starting") return { ready: false, reason: "starting" };
    const stats = service.enforcer.stats();
    if (stats.mode === "paused_store")
      return { ready: false, reason: `the database does not answer (${stats.storeProblem ?? "failing"})` };
    if (!service.streaming)
      return {
        ready: false,
        reason: `OpenCode does not answer at ${service.shownUrl} (${service.streamProblem ?? "connecting to its event stream"})`,
      };
    return databaseAnswers(opened);
  };
  const metrics = Metrics
    ? new Metrics(
        () => {
          const stats = service?.enforcer.stats();
          return {
            armed: stats?.armed ?? 0,
            paused: stats?.mode === "paused_store" ? 1 : 0,
            serversFollowed: service?.streaming ? 1 : 0,
          };
        },
        async () => (await readiness()).ready,
        () => opened.read(countParked()),
      )
    : undefined;
  service = new StandaloneService({
    url,
    directory: options.directory,
    username: options.username ?? process.env.OPENCODE_SERVER_USERNAME,
    password: options.password ?? process.env.OPENCODE_SERVER_PASSWORD,
    config,
    noticeChannels,
    store: metrics ? observeStore(opened, metrics) : opened,
    log,
    server: options.name ?? null,
    silenceMs,
    onReconnected: () => metrics?.reconnected(),
  });
  const running = service;
  const sources = metrics && { metrics, alive: () => !stopping(), ready: readiness };
  const listening = await listenFor(options, sources, { store: opened, config, log });
  await service.start();
  log(
    "info",
    `todo-continuation service running against ${safeUrl(url)} (database ${opened.location})` +
      `${listening.said}; Ctrl-C stops it`,
  );
  await untilSignalled(
    log,
    () => running.stop(),
    async () => {
      await listening.close();
      await opened.close();
    },
  );
}

/** Ready when the database commits a write within READY_PROBE_MS. */
async function databaseAnswers(store: EngineStore): Promise<Readiness> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READY_PROBE_MS} ms`)), READY_PROBE_MS);
  });
  try {
    await Promise.race([store.probe(), late]);
    return { ready: true };
  } catch (error) {
    return { ready: false, reason: `the database does not answer: ${describeDatabaseFailure(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

async function serveFleet(
  config: Config,
  silenceMs: number | undefined,
  options: ServeOptions,
  log: Log,
  noticeChannels: NoticeChannels,
): Promise<void> {
  const location = config.databasePath;
  if (!isPostgresUrl(location))
    throw new UsageError(
      "serve needs --url <OpenCode server>, or a postgres:// database (--db) whose servers a fleet shares",
    );
  const { FleetReplica } = await import("../../service/fleet.js");
  const Metrics = await metricsOf(options);
  const opened = await openForWriting(location, { busyTimeoutMs: config.busyTimeoutMs, kind: "fleet" });
  const liveness = await openForWriting(location, { busyTimeoutMs: config.busyTimeoutMs, kind: "fleet", poolSize: 2 });
  let replica: FleetReplica | undefined;
  const metrics = Metrics
    ? new Metrics(
        () => replica?.figures() ?? { armed: 0, paused: 0, serversFollowed: 0 },
        async () => replica?.readiness().ready ?? false,
        () => opened.read(countParked()),
      )
    : undefined;
  const store = metrics ? observeStore(opened, metrics) : opened;
  replica = new FleetReplica({
    store,
    liveness,
    config,
    noticeChannels,
    log,
    silenceMs,
    onTakeover: () => metrics?.tookOver(),
    onReconnected: () => metrics?.reconnected(),
  });
  const running = replica;
  const sources = metrics && {
    metrics,
    alive: () => running.mode !== "stopping" && running.mode !== "stopped",
    ready: async () => running.readiness(),
  };
  const listening = await listenFor(options, sources, { store: opened, config, log });
  await replica.start();
  const { following, replicas } = replica.stats();
  log(
    "info",
    `fleet replica ${replica.id} running (database ${opened.location}, ${replicas} replica(s) alive, following ${following.length ? following.join(", ") : "none yet"})` +
      `${listening.said}; Ctrl-C stops it`,
  );
  await untilSignalled(
    log,
    () => running.stop(),
    async () => {
      await listening.close();
      await opened.close();
      await liveness.close();
    },
  );
}
