// One simulated OpenCode server: its own 127.0.0.1 port, one project directory (its instance), its sessions, and its
// event streams. It answers every route the service calls in OpenCode 1.18.33's shapes, after `latencyMs`; frozen, it
// answers nothing and publishes nothing until it thaws, as a stopped process would (what arrived meanwhile is answered
// then). Killed, it drops every connection and stops listening, keeping its sessions (OpenCode keeps them in its
// database); started again, it listens on the same port. Given a password, it answers 401 to a request without
// OpenCode's basic auth (user `opencode`).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { agentsJson } from "./agents.js";
import { descendingId, newAscendingId, reserveStamps } from "./ids.js";
import { messageList, sessionInfo, todoItems, type TurnError } from "./payloads.js";
import {
  directoryOf,
  logBody,
  PayloadError,
  type LogLine,
  promptBody,
  readJson,
  routeOf,
  sdkCallOf,
  toastBody,
  type Route,
  type SdkCall,
} from "./requests.js";
import type { Due, Scheduler } from "./scheduler.js";
import { SimSession, type SessionHost } from "./session.js";
import { createdEvents, type EventDetail, type EventSink } from "./turn-events.js";

export interface SimServerOptions {
  name: string;
  directory: string;
  todos: number;
  turnMs: number;
  /** Before each answer is written: one delay for every call, or one per call (absent: none). */
  latencyMs: number | Partial<Record<SdkCall, number>>;
  detail: EventDetail;
  /** OpenCode's `OPENCODE_SERVER_PASSWORD`: every request must carry it (absent: none asked). */
  password?: string;
  /** How long an idle kept-alive connection stays open (advertised to the client in `Keep-Alive`). */
  keepAliveMs: number;
  /** The provider's error a session's turn (1: its first) fails on; absent or undefined: it works. */
  failTurn?: (sessionId: string, turn: number) => TurnError | undefined;
}

interface Answer {
  status: number;
  body?: string;
}

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  "x-content-type-options": "nosniff",
};

const json = (value: unknown, status = 200): Answer => ({ status, body: JSON.stringify(value) });
const notFound = (id: string) => json({ name: "NotFoundError", data: { message: `Session not found: ${id}` } }, 404);
const badRequest = (message: string) => json({ name: "BadRequest", data: { message, kind: "Payload" } }, 400);
/** What OpenCode answers to a session id that is not one (it does not start with `ses`). */
const unexpected = () =>
  json(
    {
      name: "UnknownError",
      data: { message: "Unexpected server error. Check server logs for details.", ref: newAscendingId("err") },
    },
    500,
  );

/** An answer written later: after the server's latency, or once it thaws. */
class LateAnswer implements Due {
  constructor(
    private readonly server: SimServer,
    private readonly res: ServerResponse,
    private readonly answer: Answer,
  ) {}

  due(now: number): void {
    if (this.server.frozenUntil > now) return this.server.scheduler.schedule(this.server.frozenUntil, this);
    this.server.write(this.res, this.answer);
  }
}

export class SimServer implements SessionHost, EventSink {
  readonly sessions = new Map<string, SimSession>();
  url = "";
  frozenUntil = 0;
  /** Requests answered, events written (counted per stream). */
  requests = 0;
  events = 0;
  /** The bodies it refused, as OpenCode's 400 says why: a follower sending one OpenCode would refuse. */
  readonly refused: string[] = [];
  /** What was sent to OpenCode's log, oldest first: the lines a plugin writes with `app.log`. */
  readonly logs: LogLine[] = [];
  private readonly streams = new Set<ServerResponse>();
  /** Streams of another directory's instance: they hear the heartbeat only. */
  private readonly foreignStreams = new Set<ServerResponse>();
  private held: Array<[IncomingMessage, ServerResponse]> = [];
  private readonly http: Server;
  private agents: string | undefined;

  constructor(
    readonly scheduler: Scheduler,
    private readonly options: SimServerOptions,
  ) {
    this.http = createServer((req, res) => this.arrive(req, res));
    this.http.keepAliveTimeout = options.keepAliveMs;
  }

  get name(): string {
    return this.options.name;
  }
  get directory(): string {
    return this.options.directory;
  }
  get todos(): number {
    return this.options.todos;
  }
  get turnMs(): number {
    return this.options.turnMs;
  }
  get failTurn(): SimServerOptions["failTurn"] {
    return this.options.failTurn;
  }
  get detail(): EventDetail {
    return this.options.detail;
  }
  get sink(): EventSink {
    return this;
  }
  get listening(): boolean {
    return this.streams.size > 0;
  }
  get backlogBytes(): number {
    let bytes = 0;
    for (const res of this.streams) bytes += res.writableLength;
    return bytes;
  }
  get subscribers(): number {
    return this.streams.size + this.foreignStreams.size;
  }

  async listen(host = "127.0.0.1", port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.http.once("error", reject);
      this.http.listen(port, host, () => {
        this.http.off("error", reject);
        resolve();
      });
    });
    this.url = `http://${host}:${(this.http.address() as AddressInfo).port}`;
  }

  /** Listening again on the port it had, after `close()`: a killed OpenCode started again on the same files. */
  async restart(): Promise<void> {
    const { hostname, port } = new URL(this.url);
    await this.listen(hostname, Number(port));
  }

  async close(): Promise<void> {
    for (const res of [...this.streams, ...this.foreignStreams]) res.destroy();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** A session with a new id, idle and without messages. */
  addSession(title: string, now = Date.now()): SimSession {
    const session = new SimSession(this, descendingId("ses", reserveStamps(1, now)), title, now);
    this.sessions.set(session.facts.id, session);
    return session;
  }

  emit(type: string, properties: Record<string, unknown>): void {
    const frame = `data: ${JSON.stringify({ id: newAscendingId("evt"), type, properties })}\n\n`;
    for (const res of this.streams) res.write(frame);
    this.events += this.streams.size;
  }

  /** OpenCode's `server.heartbeat`, every 10 s on every stream of every instance. */
  heartbeat(): void {
    if (this.frozenUntil > Date.now() || this.subscribers === 0) return;
    const frame = `data: ${JSON.stringify({ id: newAscendingId("evt"), type: "server.heartbeat", properties: {} })}\n\n`;
    for (const res of this.streams) res.write(frame);
    for (const res of this.foreignStreams) res.write(frame);
  }

  /** Stops answering and publishing for `ms`; what arrives meanwhile is answered when it thaws. */
  freeze(ms: number, now = Date.now()): void {
    this.frozenUntil = Math.max(this.frozenUntil, now + ms);
    this.scheduler.schedule(this.frozenUntil, { due: (at) => this.thaw(at) });
  }

  write(res: ServerResponse, answer: Answer): void {
    if (res.destroyed) return;
    this.requests++;
    if (answer.body === undefined) res.writeHead(answer.status).end();
    else res.writeHead(answer.status, JSON_HEADERS).end(answer.body);
  }

  private thaw(now: number): void {
    if (this.frozenUntil > now) return;
    const held = this.held;
    this.held = [];
    for (const [req, res] of held) if (!res.destroyed) this.arrive(req, res);
  }

  private arrive(req: IncomingMessage, res: ServerResponse): void {
    if (this.frozenUntil > Date.now()) {
      this.held.push([req, res]);
      return;
    }
    if (!this.authorized(req)) return this.write(res, { status: 401 });
    const route = routeOf(req);
    const found = sdkCallOf(route);
    if (!found) {
      const message = `no route ${route.method} /${route.segments.join("/")} in the simulated OpenCode`;
      return this.write(res, json({ name: "NotFoundError", data: { message } }, 404));
    }
    const ours = directoryOf(req, route, this.directory) === this.directory;
    this.answer(found.call, found.id, route, req, res, ours).then(
      (answer) => {
        if (!answer) return;
        const delay = this.latencyOf(found.call);
        if (delay <= 0) return this.write(res, answer);
        this.scheduler.schedule(Date.now() + delay, new LateAnswer(this, res, answer));
      },
      (error: unknown) => this.write(res, json({ name: "UnknownError", data: { message: String(error) } }, 500)),
    );
  }

  private authorized(req: IncomingMessage): boolean {
    const { password } = this.options;
    if (password === undefined) return true;
    return req.headers.authorization === `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;
  }

  /** The answer to a request with a JSON body, or OpenCode's 400 when it refuses the body. */
  private async refusing(req: IncomingMessage, answer: (body: unknown) => Answer): Promise<Answer> {
    const body = await readJson(req);
    try {
      return answer(body);
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      this.refused.push(`${req.method} ${req.url}: ${error.message}`);
      return badRequest(error.message);
    }
  }

  private latencyOf(call: SdkCall): number {
    const { latencyMs } = this.options;
    return typeof latencyMs === "number" ? latencyMs : (latencyMs[call] ?? 0);
  }

  /** The answer to a call, or undefined for an event stream (answered as it goes). */
  private async answer(
    call: SdkCall,
    id: string | undefined,
    route: Route,
    req: IncomingMessage,
    res: ServerResponse,
    ours: boolean,
  ): Promise<Answer | undefined> {
    switch (call) {
      case "event.subscribe":
        return this.subscribe(res, ours);
      case "session.list":
        return this.list(ours);
      case "session.create":
        return this.create(await readJson(req));
      case "session.status":
        return this.statuses(ours);
      case "app.agents":
        return { status: 200, body: (this.agents ??= agentsJson(`/sim/home/${this.name}`)) };
      case "tui.showToast":
        return this.refusing(req, (body) => {
          this.emit("tui.toast.show", toastBody(body));
          return json(true);
        });
      case "app.log":
        return this.refusing(req, (body) => {
          this.logs.push(logBody(body));
          return json(true);
        });
      default:
        return this.sessionCall(call, id!, route, req);
    }
  }

  private async sessionCall(call: SdkCall, id: string, route: Route, req: IncomingMessage): Promise<Answer> {
    if (!id.startsWith("ses")) return unexpected();
    const session = this.sessions.get(id);
    if (!session) return notFound(id);
    switch (call) {
      case "session.get":
        return json(sessionInfo(session.facts));
      case "session.children":
        return json([]);
      case "session.todo":
        return json(session.turnsDone === 0 ? [] : todoItems(session.completed, this.todos));
      case "session.messages": {
        const limit = Number(route.query?.get("limit") ?? 0) || 0;
        return json(messageList(id, session.entries, this.todos, this.directory, limit));
      }
      default:
        return this.refusing(req, (body) => {
          session.prompt(promptBody(body), Date.now());
          return { status: 204 };
        });
    }
  }

  private subscribe(res: ServerResponse, ours: boolean): undefined {
    const streams = ours ? this.streams : this.foreignStreams;
    res.writeHead(200, SSE_HEADERS);
    res.write(`data: ${JSON.stringify({ id: newAscendingId("evt"), type: "server.connected", properties: {} })}\n\n`);
    streams.add(res);
    res.on("close", () => streams.delete(res));
    return undefined;
  }

  private list(ours: boolean): Answer {
    if (!ours) return json([]);
    return json([...this.sessions.values()].map((s) => sessionInfo(s.facts)));
  }

  /** Only sessions that are not idle, as OpenCode lists them. */
  private statuses(ours: boolean): Answer {
    const busy: Record<string, { type: "busy" }> = {};
    if (ours) for (const [id, s] of this.sessions) if (s.busy) busy[id] = { type: "busy" };
    return json(busy);
  }

  private create(body: unknown): Answer {
    const title = (body as { title?: unknown } | undefined)?.title;
    const session = this.addSession(typeof title === "string" ? title : `New session - ${new Date().toISOString()}`);
    createdEvents(session);
    return json(sessionInfo(session.facts));
  }
}
