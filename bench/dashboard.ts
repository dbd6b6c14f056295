// 12. The page at scale: 50,000 sessions in 20 projects and 1,000,000 audit rows (with a continuation, its bill and a
// countdown or park for some), on a SQLite file. Timed over HTTP as a browser asks: the first screen (`/`, the newest
// 200 sessions drawn) and a session's page, each against its floor, the same rows read raw through the same driver
// (the newest 200 session rows; the session's audit rows). Measured interleaved, so that a busy machine slows a
// figure and its floor alike. Then the live feed at rest: statements per second with a page open and nothing changing.
import { resolveConfig } from "../src/config/resolve.js";
import { Dashboard } from "../src/dashboard/server.js";
import { listenHttp } from "../src/service/status-server.js";
import { openStore } from "../src/store/open/open.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { interleaved, ratioOf, scratch, sleep, type Figure } from "./lib.js";

const SESSIONS = 50_000;
const AUDIT_ROWS = 1_000_000;

/** The rows, written by SQLite itself (recursive CTEs) in one transaction. */
async function populate(db: string): Promise<void> {
  const store = await openSqlite(db);
  const now = Date.now();
  const series = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)";
  store.raw.immediate(() => {
    store.raw.run(
      `${series} INSERT INTO sessions (session_id, directory, title, continuations, continuation_cost, created_at,
         updated_at, notified_stop, stopped_at)
       SELECT 'ses_' || i, '/work/project-' || (i % 20), 'Session number ' || i, i % 7, (i % 7) * 0.01, ? - i * 1000,
         ? - i * 1000, CASE WHEN i % 11 = 0 THEN 'budget_exhausted' END, CASE WHEN i % 13 = 0 THEN ? END FROM n`,
      SESSIONS,
      now,
      now,
      now,
    );
    // Twenty decisions a session, oldest first (ids grow with time, as they do).
    store.raw.run(
      `${series} INSERT INTO audit_events (at, session_id, directory, event, reason, detail)
       SELECT ? - (? - i) * 50, 'ses_' || (i % ?), '/work/project-' || (i % 20),
         CASE i % 4 WHEN 0 THEN 'armed' WHEN 1 THEN 'fired' WHEN 2 THEN 'injected' ELSE 'skipped' END,
         CASE i % 4 WHEN 3 THEN 'todos_complete' END, '{"trigger":"idle","todosOpen":2,"todosTotal":3}' FROM n`,
      AUDIT_ROWS,
      now,
      AUDIT_ROWS,
      SESSIONS,
    );
    store.raw.run(
      `${series} INSERT INTO injections (id, session_id, countdown_id, directory, message_id, created_at, status,
         todos_total, todos_open, attempt, updated_at)
       SELECT 'inj_' || i, 'ses_' || i, 'cd_done_' || i, '/work/project-' || (i % 20), 'msg_' || i, ? - i * 1000,
         'sent', 3, 1 + i % 3, 0, ? FROM n`,
      SESSIONS,
      now,
      now,
    );
    store.raw.run(
      `${series} INSERT INTO countdowns (id, session_id, directory, armed_at, deadline_at, state, attempt, todos_open,
         todos_total)
       SELECT 'cd_' || i, 'ses_' || (i * 100), '/work/project-' || (i % 20), ?, ? + 30000, 'armed', 0, 2, 3 FROM n`,
      500,
      now,
      now,
    );
  });
  store.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  store.close();
}

export async function dashboard(rounds = 15): Promise<Figure[]> {
  const { db, cleanup } = scratch("tc-bench-page-");
  try {
    await populate(db);
    const store = await openStore(db);
    const page = new Dashboard({ store, database: db, dailyCap: resolveConfig({}, {}).dailyContinuationCost });
    const server = await listenHttp({ host: "127.0.0.1", port: 0 }, async (req, res) => {
      if (!(await page.handle(req, res))) res.writeHead(404).end();
    });
    const raw = await openSqlite(db, { readonly: true });
    let n = 0;
    const session = () => `ses_${(n++ * 7919) % SESSIONS}`;
    const fetched = async (path: string) => {
      const res = await fetch(`${server.url}${path}`);
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      await res.text();
    };
    const samples = await interleaved(
      {
        overview: () => fetched("/"),
        overviewFloor: () =>
          void raw.raw.all("SELECT * FROM sessions WHERE deleted_at IS NULL ORDER BY updated_at DESC LIMIT 200"),
        session: () => fetched(`/session/${session()}`),
        sessionFloor: () =>
          void raw.raw.all(
            "SELECT * FROM audit_events WHERE session_id = ? ORDER BY id DESC LIMIT 300",
            `ses_${(n * 7919) % SESSIONS}`,
          ),
      },
      { rounds, batch: 1, warmupRounds: 2 },
    );
    const atRest = await liveFeedAtRest(server.url, page);
    page.close();
    await server.close();
    raw.close();
    await store.close();
    const ms = (ns: number) => ns / 1e6;
    const figure = (name: string, key: "overview" | "session", target: number): Figure => ({
      group: "the page (50,000 sessions, 1,000,000 audit rows)",
      name,
      median: ms(samples[key]!.median),
      low: ms(samples[key]!.p25),
      high: ms(samples[key]!.p75),
      unit: "ms",
      ratio: { of: "the same rows read raw", value: ratioOf(samples[key]!, samples[`${key}Floor`]!) },
      target: `≤ ${target} ms`,
      met: ms(samples[key]!.median) <= target,
    });
    return [
      figure("first screen (/, the newest 200 drawn)", "overview", 300),
      figure("a session's page", "session", 100),
      {
        group: "the page (50,000 sessions, 1,000,000 audit rows)",
        name: "live feed at rest, one page open",
        median: atRest,
        unit: "statements/s",
        note: "one statement of three index lookups a poll; none with no page open",
      },
    ];
  } finally {
    cleanup();
  }
}

/** Statements per second the live feed makes with one page open and nothing changing, over 5 s. */
async function liveFeedAtRest(url: string, page: Dashboard): Promise<number> {
  const controller = new AbortController();
  const res = await fetch(`${url}/events`, { signal: controller.signal });
  const reading = res.body!.getReader();
  void (async () => {
    for (;;) if ((await reading.read().catch(() => ({ done: true }))).done) return;
  })();
  await sleep(1000);
  const before = page.live.polls;
  await sleep(5000);
  const perSecond = (page.live.polls - before) / 5;
  controller.abort();
  return perSecond;
}
