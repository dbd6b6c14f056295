// The page over HTTP: the overview (`/`), a session's page (`/session/<id>`), the live feed (`/events`), its two files
// (`/assets/`) and the actions (POST `/session/<id>/<action>`). The CLI's `dashboard` serves it alone; the service
// serves it beside its health and metrics on `--listen`. Every answer forbids inline scripts and framing, and is never
// cached: it is the database as it is now.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OperatorStore } from "../store/operator/operator.js";
import {
  dayTotals,
  OVERVIEW_FILTERS,
  overviewRows,
  projects,
  type OverviewFilter,
} from "../store/operator/overview.js";
import { auditTrail, checkRuns, sessionSeen } from "../store/operator/queries.js";
import { continuationsOf, noticesOf, todosReached } from "../store/operator/session-page.js";
import { activity, stopsByReason } from "../store/operator/charts.js";
import { chartsContent } from "./pages/charts.js";
import { TOLD_STOP_REASONS } from "./session-state.js";
import { Access } from "./access.js";
import { act, OUTCOMES, type Outcome } from "./actions.js";
import { SCRIPT, STYLE } from "./assets.js";
import { html, toHtml, type Markup } from "./html.js";
import { LiveFeed } from "./live.js";
import { page, type Frame } from "./pages/layout.js";
import { overviewContent } from "./pages/overview.js";
import { ACTIONS, sessionContent, type Action } from "./pages/session.js";

export interface DashboardOptions {
  store: OperatorStore;
  /** The database as the header names it (no password). */
  database: string;
  /** The access token every request must carry; none on a loopback address. */
  token?: string;
  /** The daily cost cap the totals are measured against (0: none). */
  dailyCap?: number;
  clock?: () => number;
  /** Where a failure to answer is told (the request gets a 500 either way). */
  log?: (message: string) => void;
}

const HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

/** The newest sessions the overview lists unless asked for more (at most MAX_LIMIT). */
const LIMIT = 200;
const MAX_LIMIT = 2000;
const MAX_FORM_BYTES = 8192;

function send(res: ServerResponse, status: number, body: string, type: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { ...HEADERS, "content-type": type, ...extra });
  res.end(body);
}

const sendHtml = (res: ServerResponse, status: number, markup: Markup) =>
  send(res, status, toHtml(markup), "text/html; charset=utf-8");

function localMidnight(now: number): number {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  let body = "";
  for await (const chunk of req) {
    body += (chunk as Buffer).toString();
    if (body.length > MAX_FORM_BYTES) throw new Error("form too large");
  }
  return new URLSearchParams(body);
}

export class Dashboard {
  readonly access: Access;
  readonly live: LiveFeed;
  private readonly clock: () => number;

  constructor(private readonly options: DashboardOptions) {
    this.access = new Access(options.token);
    this.clock = options.clock ?? Date.now;
    this.live = new LiveFeed(options.store.reader, (error) => this.options.log?.(`live feed: ${String(error)}`));
  }

  /** Answers a request of the page's; false when the path is none of its own (the service answers it then). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = new URL(req.url ?? "/", "http://dashboard");
    const path = url.pathname;
    const session = /^\/session\/(ses_[\w-]{1,120})(?:\/([a-z]+))?$/.exec(path);
    if (!["/", "/events", "/charts"].includes(path) && !path.startsWith("/assets/") && !session) return false;
    if (!this.access.admitted(req, url)) {
      send(res, 401, "This page needs its access token: open it with ?token=… once.\n", "text/plain; charset=utf-8");
      return true;
    }
    const cookie = this.access.cookieFor(url);
    if (cookie) {
      url.searchParams.delete("token");
      res.writeHead(303, { ...HEADERS, "set-cookie": cookie, location: `${url.pathname}${url.search}` }).end();
      return true;
    }
    try {
      await this.route(req, res, url, session);
    } catch (error) {
      this.options.log?.(`page ${path}: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) send(res, 500, "The page failed to answer; its log says why.\n", "text/plain");
      else res.destroy();
    }
    return true;
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, session: RegExpExecArray | null) {
    const method = req.method ?? "GET";
    if (session?.[2]) {
      if (method !== "POST") return send(res, 405, "POST only\n", "text/plain", { allow: "POST" });
      return this.action(req, res, session[1]!, session[2]);
    }
    if (method !== "GET" && method !== "HEAD") return send(res, 405, "GET only\n", "text/plain", { allow: "GET" });
    if (url.pathname === "/assets/page.css") return send(res, 200, STYLE, "text/css; charset=utf-8");
    if (url.pathname === "/assets/page.js") return send(res, 200, SCRIPT, "text/javascript; charset=utf-8");
    if (url.pathname.startsWith("/assets/")) return send(res, 404, "no such file\n", "text/plain");
    if (url.pathname === "/events") return this.live.follow(res);
    if (session) return this.sessionPage(res, session[1]!, url);
    if (url.pathname === "/charts") return this.charts(res);
    return this.overview(res, url);
  }

  private async frame(title: string): Promise<Frame> {
    // The mark first: a change made while the page is read is then told to it by the feed.
    const mark = await this.live.current();
    return { title, database: this.options.database, now: this.clock(), mark, base: "" };
  }

  private async overview(res: ServerResponse, url: URL): Promise<void> {
    const asked = url.searchParams.get("filter") ?? "all";
    const filter: OverviewFilter = (OVERVIEW_FILTERS as readonly string[]).includes(asked)
      ? (asked as OverviewFilter)
      : "all";
    const directory = url.searchParams.get("project") || undefined;
    const search = url.searchParams.get("q")?.trim() || undefined;
    const limit = Math.min(MAX_LIMIT, Math.max(1, Number(url.searchParams.get("limit")) || LIMIT));
    const frame = await this.frame("Sessions");
    const { reader } = this.options.store;
    const [rows, totals, known] = await Promise.all([
      overviewRows(reader, { filter, directory, search, limit }),
      dayTotals(reader, localMidnight(frame.now)),
      projects(reader),
    ]);
    const model = { rows, totals, projects: known, filter, directory, search, limit, now: frame.now, base: "" };
    sendHtml(res, 200, page(frame, overviewContent({ ...model, dailyCap: this.options.dailyCap ?? 0 })));
  }

  private async charts(res: ServerResponse): Promise<void> {
    const frame = await this.frame("Pictures");
    const { reader, dialect, roster } = this.options.store;
    const hour = 3_600_000;
    const dayStart = Math.floor(frame.now / hour) * hour - 23 * hour;
    const monthStart = localMidnight(frame.now) - 29 * 24 * hour;
    const [day, month, stopsDay, stopsMonth, servers] = await Promise.all([
      activity(reader, dialect, { start: dayStart, bucketMs: hour, buckets: 24 }),
      activity(reader, dialect, { start: monthStart, bucketMs: 24 * hour, buckets: 30 }),
      stopsByReason(reader, dayStart, TOLD_STOP_REASONS),
      stopsByReason(reader, monthStart, TOLD_STOP_REASONS),
      roster?.list(),
    ]);
    const model = { day, month, stopsDay, stopsMonth, servers, now: frame.now };
    sendHtml(res, 200, page(frame, chartsContent(model)));
  }

  private async sessionPage(res: ServerResponse, sessionId: string, url: URL): Promise<void> {
    const frame = await this.frame(sessionId);
    const { reader } = this.options.store;
    const [row] = await overviewRows(reader, { filter: "all", sessionId, limit: 1 });
    if (!row) return sendHtml(res, 404, page(frame, notFound(sessionId)));
    const [timeline, continuations, notices, checks, todos] = await Promise.all([
      auditTrail(reader, { session: sessionId, limit: 300 }),
      continuationsOf(reader, sessionId, 100),
      noticesOf(reader, sessionId, 100),
      checkRuns(reader, { session: sessionId, limit: 20 }),
      todosReached(reader, sessionId),
    ]);
    const done = url.searchParams.get("done");
    const flash = done && Object.hasOwn(OUTCOMES, done) ? OUTCOMES[done as Outcome] : undefined;
    frame.title = row.title ?? sessionId;
    const model = { row, timeline, continuations, notices, checks, todos, flash, now: frame.now, base: "" };
    sendHtml(res, 200, page(frame, sessionContent({ ...model, formToken: this.access.formToken })));
  }

  private async action(req: IncomingMessage, res: ServerResponse, sessionId: string, name: string): Promise<void> {
    if (!(ACTIONS as readonly string[]).includes(name)) return send(res, 404, "no such action\n", "text/plain");
    const form = await formOf(req);
    if (!this.access.formAllowed(req, form)) {
      send(res, 403, `${OUTCOMES.forged.text}\n`, "text/plain; charset=utf-8");
      return;
    }
    // The CLI's check (requireSeen): a session the database never saw is not acted on.
    if (!(await sessionSeen(this.options.store.reader, sessionId)))
      return send(res, 404, "no such session\n", "text/plain");
    const outcome = await act(this.options.store, sessionId, name as Action, this.clock());
    const location = `/session/${encodeURIComponent(sessionId)}?done=${outcome}`;
    res.writeHead(303, { ...HEADERS, location }).end();
  }

  close(): void {
    this.live.close();
  }
}

function notFound(sessionId: string): Markup {
  return html`<div class="empty">No session ${sessionId} in this database. <a href="/">Every session</a></div>`;
}
