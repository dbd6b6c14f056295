// The page over HTTP against a real SQLite file that a real engine (with a fake OpenCode) writes: the overview lists
// each session in its state, titles and every other value a session wrote are text, the actions go through the same
// changes as the CLI's (audited `dashboard`) and only with the page's own token, an access token guards it when one is
// set, and the live feed tells an open page of a change. What a browser makes of it: dashboard.system.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Dashboard } from "../../src/dashboard/server.js";
import { park } from "../../src/store/changes/park.js";
import { listenHttp, type StatusServer } from "../../src/service/status-server.js";
import { ev } from "../support/events.js";
import { DIRECTORY, drained, startEngine, type EngineFixture } from "../support/engine-fixture.js";
import { waitFor } from "../support/wait-for.js";

const XSS = "<img src=x onerror=alert(1)>";
const BUDGET = "ses_page_budget";
const OTHER = "ses_page_other";

let f: EngineFixture;
let page: Dashboard;
let server: StatusServer;

async function serve(token?: string): Promise<{ page: Dashboard; server: StatusServer }> {
  const made = new Dashboard({ store: f.port, database: f.dbPath, token, dailyCap: 5 });
  const listening = await listenHttp({ host: "127.0.0.1", port: 0 }, async (req, res) => {
    if (!(await made.handle(req, res))) res.writeHead(404).end();
  });
  return { page: made, server: listening };
}

function idleWithTodos(sessionId: string): void {
  f.host.addUserMessage(sessionId, "go");
  f.host.setTodos(sessionId, [
    ["a", "pending"],
    ["b", "completed"],
  ]);
  f.enforcer.handleEvent(ev.idle(sessionId));
}

const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, { redirect: "manual", ...init });
const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  get(path, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });

beforeAll(async () => {
  f = await startEngine({ config: { toast: false, countdownSeconds: 0.05, maxContinuations: 1, leaseMs: 1500 } });
  f.enforcer.handleEvent(ev.titled(BUDGET, XSS));
  idleWithTodos(BUDGET);
  await drained(f);
  // The continuation's turn started, answered and ended: its idle finds the budget of 1 spent.
  f.enforcer.handleEvent(ev.status(BUDGET, "busy"));
  f.host.addAssistantMessage(BUDGET);
  f.enforcer.handleEvent(ev.idle(BUDGET));
  await drained(f);
  f.enforcer.handleEvent(ev.titled(OTHER, "Refactor the parser"));
  await drained(f);
  ({ page, server } = await serve());
}, 30_000);

afterAll(async () => {
  page?.close();
  await server?.close();
  await f?.destroy();
});

describe("the overview", () => {
  it("lists each session with its state in words, its title as text and its last decision", async () => {
    const res = await get("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const body = await res.text();
    expect(body).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(body).not.toContain("<img");
    const budget = body.slice(body.indexOf(`data-session="${BUDGET}"`));
    expect(budget).toMatch(/data-state="needs">needs you: budget/);
    expect(budget).toContain("1 of 2 done");
    expect(body).toContain("Refactor the parser");
    expect(body).toContain("today: <b>1</b> continuations");
  });

  it("filters to the sessions that need the person, and finds one by a part of its title", async () => {
    const needs = await (await get("/?filter=needs")).text();
    expect(needs).toContain(BUDGET);
    expect(needs).not.toContain(OTHER);
    const found = await (await get(`/?q=${encodeURIComponent("the pars")}`)).text();
    expect(found).toContain(OTHER);
    expect(found).not.toContain(`data-session="${BUDGET}"`);
  });
});

describe("the pictures", () => {
  it("draw continuations per hour and per day, and the sessions stopped by each reason", async () => {
    const body = await (await get("/charts")).text();
    const svgs = [...body.matchAll(/<svg [^>]*>(.*?)<\/svg>/gs)].map((m) => (m[1]!.match(/<rect\s/g) ?? []).length);
    expect(svgs).toEqual([24, 24, 30, 30]);
    // This hour's bar holds the continuation sent.
    expect(body).toMatch(/<title>\d\d:00: 1<\/title>/);
    expect(body).toMatch(/budget_exhausted<\/span>\s*<meter min="0" max="1" value="1"><\/meter\s*>/);
    expect(body).not.toMatch(/ style=/);
    // A machine's own file serves no fleet: no servers' table.
    expect(body).not.toContain("The fleet's servers");
  });
});

describe("a session's page", () => {
  it("shows its decisions, its continuation and the actions that mean something now", async () => {
    const body = await (await get(`/session/${BUDGET}`)).text();
    expect(body).toContain('data-event="injected"');
    expect(body).toMatch(/<li data-reached="open">a <span class="muted">open<\/span><\/li>/);
    expect(body).toMatch(/<li data-reached="closed">b <span class="muted">closed<\/span><\/li>/);
    expect(body).toContain("budget_exhausted");
    expect(body).toMatch(/<h2>Continuations<\/h2>\s*<table>.*<td data-label="sent">sent<\/td>/s);
    expect(body).toContain('data-action="allow"');
    expect(body).toContain('data-action="stop"');
    expect((await get("/session/ses_never_seen")).status).toBe(404);
  });
});

describe("actions", () => {
  it("are refused without the page's token, and change nothing", async () => {
    const before = f.rows.audit(OTHER).length;
    const res = await post(`/session/${OTHER}/stop`, { csrf: "guessed" });
    expect(res.status).toBe(403);
    const forged = await post(`/session/${OTHER}/stop`, { csrf: page.access.formToken }, { origin: "http://evil" });
    expect(forged.status).toBe(403);
    const unseen = await post("/session/ses_page_never_seen/stop", { csrf: page.access.formToken });
    expect(unseen.status).toBe(404);
    expect(f.rows.audit("ses_page_never_seen")).toEqual([]);
    expect(f.rows.audit(OTHER)).toHaveLength(before);
  });

  it("stop with the page's token: stopped by the page, then resumed by it", async () => {
    const res = await post(`/session/${OTHER}/stop`, { csrf: page.access.formToken });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/session/${OTHER}?done=stopped`);
    expect(f.rows.audit(OTHER).at(-1)).toMatchObject({ event: "stopped", reason: "dashboard" });
    const shown = await (await get(res.headers.get("location")!)).text();
    expect(shown).toContain("Stopped: nothing continues it until it is resumed.");
    expect(shown).toMatch(/data-state="stopped">stopped/);
    await post(`/session/${OTHER}/resume`, { csrf: page.access.formToken });
    expect(f.rows.audit(OTHER).at(-1)).toMatchObject({ event: "unstopped", reason: "dashboard" });
  });

  it("wake now ends a park from the page, through the same change as the CLI's", async () => {
    const parked = "ses_page_parked";
    f.enforcer.handleEvent(ev.titled(parked, "Wait for the CI run"));
    await drained(f);
    await f.port.change(
      park(
        { sessionId: parked, directory: DIRECTORY },
        { id: "park_page", reason: "agent", wakeAt: Date.now() + 3_600_000, detail: { asked: "the CI run" } },
        Date.now(),
      ),
    );
    const before = await (await get(`/session/${parked}`)).text();
    expect(before).toMatch(/data-state="parked">\s*parked/);
    const res = await post(`/session/${parked}/wake`, { csrf: page.access.formToken });
    expect(res.headers.get("location")).toBe(`/session/${parked}?done=woke`);
    expect(f.rows.audit(parked).find((r) => r.event === "woke")).toMatchObject({ reason: "dashboard" });
    const again = await post(`/session/${parked}/wake`, { csrf: page.access.formToken });
    expect(again.headers.get("location")).toBe(`/session/${parked}?done=not_parked`);
  });

  it("allow more after a budget stop lets the engine continue the session", async () => {
    const res = await post(`/session/${BUDGET}/allow`, { csrf: page.access.formToken });
    expect(res.headers.get("location")).toBe(`/session/${BUDGET}?done=allowed`);
    expect(f.rows.audit(BUDGET).find((r) => r.event === "unstopped")).toMatchObject({ reason: "dashboard" });
    await waitFor("the second continuation", () => f.rows.injections(BUDGET).length === 2, {
      timeoutMs: 15_000,
      report: () => f.rows.trail(BUDGET).join("\n"),
    });
  });
});

describe("the live feed", () => {
  it("tells an open page of a decision: an armed countdown", async () => {
    const controller = new AbortController();
    const res = await get("/events", { signal: controller.signal });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    let text = "";
    const changes = () => text.split("event: change").length - 1;
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })().catch(() => {});
    await waitFor("the feed's first mark", () => changes() >= 1);
    idleWithTodos("ses_page_live");
    await waitFor("the change told", () => changes() >= 2, { timeoutMs: 5000 });
    controller.abort();
    await reading;
  });
});

describe("with an access token", () => {
  it("answers nothing without it, and keeps it in a cookie once given in the URL", async () => {
    const guarded = await serve("a-token-of-24-characters");
    try {
      const bare = await fetch(`${guarded.server.url}/`);
      expect(bare.status).toBe(401);
      const wrong = await fetch(`${guarded.server.url}/?token=not-the-token-at-all`, { redirect: "manual" });
      expect(wrong.status).toBe(401);
      const given = await fetch(`${guarded.server.url}/?token=a-token-of-24-characters`, { redirect: "manual" });
      expect(given.status).toBe(303);
      const cookie = given.headers.get("set-cookie")!;
      expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
      const kept = await fetch(`${guarded.server.url}/`, { headers: { cookie: cookie.split(";")[0]! } });
      expect(kept.status).toBe(200);
      const bearer = await fetch(`${guarded.server.url}/`, {
        headers: { authorization: "Bearer a-token-of-24-characters" },
      });
      expect(bearer.status).toBe(200);
    } finally {
      guarded.page.close();
      await guarded.server.close();
    }
  });
});
