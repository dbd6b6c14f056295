// The standalone service: the same engine, outside OpenCode's process, following a running server's event stream
// over HTTP. It reconnects with backoff when the stream drops (a server restart) or falls silent (a connection that
// died without a reset), and after a reconnect it looks again at the sessions that changed meanwhile, because their
// events were missed. A fleet replica runs one per server it follows (fleet.ts), all on one database connection and
// one owner id.
import { setTimeout as sleep } from "node:timers/promises";
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import PQueue from "p-queue";
import type { Config } from "../config/resolve.js";
import type { NoticeChannels } from "../engine/notice-sender.js";
import { Enforcer } from "../engine/enforcer.js";
import { errorMessage, withCause } from "../engine/host-calls.js";
import type { LogLevel } from "../host/port.js";
import { OpenCodeHost } from "../host/opencode-host.js";
import type { EngineStore, Scope } from "../store/port.js";
import { boundedFetch } from "./bounded-fetch.js";
import { startStopModes, type Modes, type ModeTable } from "../engine/modes.js";

/**
 * What the service is doing, changed only through its `Modes` (engine/modes.ts), which refuses a change this table does
 * not allow:
 *
 *   idle ──start()──▶ starting ──▶ connecting ◀──the stream drops / connects──▶ streaming
 *     │                  │             │                                           │
 *     └──────────────────┴───stop()────┴───────────────────────────────────────────┴──▶ stopping ──▶ stopped
 *
 * starting    the engine recovers what this scope left armed; a stop() now waits for it, and nothing is followed.
 * connecting  the event stream is being (re)connected, with backoff; `streamProblem` says why it is not connected.
 * streaming   the event stream is connected and its events handled.
 * stopping    no new connection; the engine hands its countdowns back. stopped: for good (a new service follows again).
 */
export type ServiceMode = "idle" | "starting" | "connecting" | "streaming" | "stopping" | "stopped";

const SERVICE_MODES: ModeTable<ServiceMode> = {
  idle: ["starting", "stopping"],
  starting: ["connecting", "stopping"],
  connecting: ["streaming", "stopping"],
  streaming: ["connecting", "stopping"],
  stopping: ["stopped"],
  stopped: [],
};

/** Sessions a catch-up looks at, at once. */
const CATCH_UP_LOOKS_AT_ONCE = 2;

export interface ServiceOptions {
  url: string;
  /** The project directory whose OpenCode instance is followed (the scope of this enforcer). */
  directory: string;
  username?: string;
  password?: string;
  config: Config;
  /** Where notices go (parsed once by the caller from `config.notify`); none: nothing is sent. */
  noticeChannels?: NoticeChannels;
  store: EngineStore;
  log: (level: LogLevel, message: string, extra?: Record<string, unknown>) => void;
  /** Backoff between reconnection attempts (doubling up to the maximum). */
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  /**
   * A stream with no event for this long is taken as dead and replaced. OpenCode sends `server.connected` at once and
   * `server.heartbeat` every 10 s, so silence means a connection that hung while connecting or died without a reset.
   */
  silenceMs?: number;
  /** The server's name in the rows, when one database serves several (a fleet); absent: the machine's own. */
  server?: string | null;
  /** Called when the event stream connects again after it dropped (the metrics count it). */
  onReconnected?: () => void;
  /** The owner id of the countdowns armed here, when a fleet replica shares one among its servers. */
  owner?: string;
  /**
   * Sessions updated since this time (epoch ms) are looked at when the stream first connects: a fleet replica that
   * takes over a server catches up on what changed while nobody followed it.
   */
  catchUpSince?: number;
}

/** The URL without credentials, for logs. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(invalid url)";
  }
}

function authHeaders(url: URL, username?: string, password?: string): Record<string, string> {
  const user = username || decodeURIComponent(url.username) || "opencode";
  const pass = password ?? (url.password ? decodeURIComponent(url.password) : undefined);
  return pass ? { Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` } : {};
}

export class StandaloneService {
  readonly enforcer: Enforcer;
  private readonly client: OpencodeClient;
  private readonly abort = new AbortController();
  private readonly modes: Modes<ServiceMode>;
  private lastEventAt = 0;
  private connections = 0;
  /** Why the event stream is not connected, once a try has failed (cleared when it connects). */
  private problem: string | undefined;
  private loop: Promise<void> | undefined;
  /** The sessions a catch-up looks at, a few at a time. */
  private readonly catchUps = new PQueue({ concurrency: CATCH_UP_LOOKS_AT_ONCE });

  constructor(private readonly o: ServiceOptions) {
    const url = new URL(o.url);
    const baseUrl = safeUrl(o.url);
    this.modes = startStopModes(`the service following ${baseUrl}`, SERVICE_MODES);
    this.client = createOpencodeClient({
      baseUrl,
      directory: o.directory,
      headers: authHeaders(url, o.username, o.password),
      fetch: boundedFetch(),
    });
    const host = new OpenCodeHost(this.client, o.directory, o.log);
    this.enforcer = new Enforcer({
      config: o.config,
      store: o.store,
      host,
      directory: o.directory,
      server: o.server,
      owner: o.owner,
      noticeChannels: o.noticeChannels,
    });
  }

  /** The rows this service's engine writes and recovers: its directory on its server. */
  get scope(): Scope {
    return { directory: this.o.directory, server: this.o.server ?? null };
  }

  get mode(): ServiceMode {
    return this.modes.mode;
  }

  /**
   * Whether its engine takes a lease tick from rows its fleet replica read (Enforcer.leaseTick): its start, the
   * engine's own recovery, is over, it is not stopping, and its engine decides (not paused on a failing database).
   */
  get ticking(): boolean {
    return this.modes.is("connecting", "streaming") && this.enforcer.stats().mode === "running";
  }

  /** Whether the event stream is connected now (a fleet records until when it was). */
  get streaming(): boolean {
    return this.modes.is("streaming");
  }

  /** What keeps the event stream from connecting now; undefined while connected or before the first try ended. */
  get streamProblem(): string | undefined {
    return this.streaming ? undefined : this.problem;
  }

  /** The server followed, as a message may name it (no credentials). */
  get shownUrl(): string {
    return safeUrl(this.o.url);
  }

  /**
   * Recovers what this scope left armed, then follows the event stream. Every call returns the same start; a service
   * that was stopped cannot start again (make a new one).
   */
  start(): Promise<void> {
    return this.modes.start(() => this.recoverThenFollow());
  }

  /**
   * Stops what it started, in the reverse order: the event stream and the catch-up looks queued (those running
   * finish), then its engine, which releases this process's leases so another process can adopt its countdowns at
   * once. A start in progress finishes first. Every call returns the same stop, which resolves once the service is
   * stopped.
   */
  stop(): Promise<void> {
    return this.modes.stop(() => this.letGo());
  }

  private async recoverThenFollow(): Promise<void> {
    const report = await this.enforcer.start();
    if (this.modes.stopAsked) return;
    this.modes.enter("connecting");
    const name = this.o.server ? ` (server ${this.o.server})` : "";
    this.o.log("info", `following ${this.shownUrl}${name} for ${this.o.directory}`, { ...report });
    this.loop = this.follow();
  }

  private async letGo(): Promise<void> {
    this.abort.abort();
    await this.loop?.catch(() => undefined);
    this.catchUps.clear();
    await this.catchUps.onIdle();
    await this.enforcer.dispose();
  }

  private async follow(): Promise<void> {
    const baseDelay = this.o.reconnectBaseMs ?? 500;
    // A restarted server is the common case: retrying every few seconds costs one refused connection each.
    const maxDelay = this.o.reconnectMaxMs ?? 5_000;
    let delay = baseDelay;
    const silenceMs = this.o.silenceMs ?? 30_000;
    const connectMs = Math.min(silenceMs, this.o.config.hostTimeoutMs);
    let outageSince: number | undefined;
    while (!this.modes.stopAsked) {
      const attempt = new AbortController();
      const stopAttempt = () => attempt.abort();
      this.abort.signal.addEventListener("abort", stopAttempt, { once: true });
      let heardAt = Date.now();
      let connected = false;
      // Polled rather than a timer reset per event: events come for every streamed chunk. Until the first event
      // (`server.connected`, sent at once) the limit is that of any read from OpenCode: a request that reached a
      // restarting server was seen to hang for good.
      const silenceWatch = setInterval(
        () => Date.now() - heardAt > (connected ? silenceMs : connectMs) && attempt.abort(),
        Math.min(1000, silenceMs / 4),
      );
      let failure = "the event stream ended (server stopped or restarted?)";
      try {
        const subscription = await this.client.event.subscribe({
          signal: attempt.signal,
          sseMaxRetryAttempts: 1,
          // The SDK reports a failed connection here, not by throwing: its stream just ends.
          onSseError: (error) => {
            if (!connected) failure = `event stream unavailable: ${withCause(error)}`;
          },
          throwOnError: true,
        });
        try {
          for await (const event of subscription.stream as AsyncIterable<unknown>) {
            if (this.modes.stopAsked) break;
            heardAt = Date.now();
            if (!connected) {
              connected = true;
              this.modes.enter("streaming");
              this.problem = undefined;
              await this.onConnected(outageSince); // before lastEventAt moves: it catches up from there
              outageSince = undefined;
              delay = baseDelay;
            }
            this.lastEventAt = heardAt;
            this.enforcer.handleEvent(event);
          }
        } finally {
          if (this.streaming) this.modes.enter("connecting");
        }
      } catch (error) {
        failure = `event stream unavailable: ${withCause(error)}`;
      } finally {
        clearInterval(silenceWatch);
        this.abort.signal.removeEventListener("abort", stopAttempt);
      }
      if (this.modes.stopAsked) break;
      if (attempt.signal.aborted)
        failure = connected
          ? `no event from the server for ${silenceMs} ms (it sends one every 10 s)`
          : `the event stream did not answer within ${connectMs} ms`;
      this.problem = failure;
      // One line when an outage begins and one when it ends, not one per attempt.
      if (outageSince === undefined) {
        outageSince = Date.now();
        this.o.log("warn", `${failure}; reconnecting (retrying every ${maxDelay} ms at most)`);
      }
      await sleep(delay, undefined, { signal: this.abort.signal }).catch(() => undefined);
      delay = Math.min(maxDelay, delay * 2);
    }
  }

  private async onConnected(outageSince: number | undefined): Promise<void> {
    this.connections++;
    if (this.connections === 1) {
      this.o.log("info", "connected to the event stream");
      if (this.o.catchUpSince !== undefined)
        await this.catchUp(this.o.catchUpSince, "while no replica followed this server");
      return;
    }
    this.o.onReconnected?.();
    const after = outageSince === undefined ? "" : ` after ${Math.round((Date.now() - outageSince) / 1000)} s`;
    this.o.log("info", `reconnected to the event stream${after}`);
    await this.catchUp(this.lastEventAt - 5000, "while disconnected");
  }

  /** Sessions that changed while nobody had the stream may have gone idle unseen: evaluate them as if they had. */
  private async catchUp(since: number, when: string): Promise<void> {
    this.enforcer.eventsMayHaveBeenMissed();
    try {
      const result = await this.client.session.list({
        throwOnError: true,
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.o.config.hostTimeoutMs)]),
      });
      const sessions = (result.data as Array<{ id: string; time?: { updated?: number } }>).filter(
        (s) => (s.time?.updated ?? 0) >= since,
      );
      // The latest first, a few at a time: each look reads the server several times, and a server just taken over
      // also answers the reads that check the countdowns adopted from the replica that died.
      sessions.sort((a, b) => (b.time?.updated ?? 0) - (a.time?.updated ?? 0));
      for (const session of sessions)
        void this.catchUps.add(() => this.enforcer.reevaluate(session.id)).catch(() => undefined);
      if (sessions.length > 0) this.o.log("info", `re-evaluating ${sessions.length} session(s) that changed ${when}`);
    } catch (error) {
      // A stop aborts the listing: nothing to say.
      if (!this.modes.stopAsked)
        this.o.log("warn", `could not list sessions after reconnecting: ${errorMessage(error)}`);
    }
  }
}
