// What one continuation costs the database on SQLite, through the real engine and a fake OpenCode: SQL statements and
// transactions per continuation, the session row's reads, and the engine's CPU. Sessions with three open todos are
// continued until done; each continuation's turn closes one todo (busy, the todo list, idle), as a model's would. The
// statements are counted as better-sqlite3 runs them (its `verbose` callback: each transaction's BEGIN IMMEDIATE and
// COMMIT included, as the fleet's PostgreSQL counts them), the transactions where the store opens one (a state
// change), and the store's named statements by the change or read that ran them:
// the breakdown by call site goes to standard error. Issue 51's targets for a fleet replica on PostgreSQL hold here
// too: a single user's file is shared by every OpenCode process of theirs.
import { resolveConfig } from "../src/config/resolve.js";
import { Enforcer } from "../src/engine/enforcer.js";
import type { EngineStore } from "../src/store/port.js";
import type { Change, Script, Statement } from "../src/store/script.js";
import { openSqlite } from "../src/store/sqlite/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Todo } from "../src/core/todos.js";
import { ev } from "../test/support/events.js";
import { FakeHost } from "../test/support/fake-host.js";
import { scratch, sleep, type Figure } from "./lib.js";

/** Issue 51: per continuation, beyond the idle. */
const MAX_STATEMENTS = 30;
const MAX_TRANSACTIONS = 12;
const MAX_SESSION_READS = 2;

const TODOS = ["parse", "check", "write"];

/** The store's named statements, by the change (or read) that yielded them, and its transactions. */
function countStoreCalls(store: EngineStore) {
  const byCallSite = new Map<string, number>();
  let transactions = 0;
  function* counting<T>(site: string, script: Script<T>): Script<T> {
    let step = script.next();
    while (!step.done) {
      const statement: Statement = step.value;
      const key = `${site} → ${statement.name}`;
      byCallSite.set(key, (byCallSite.get(key) ?? 0) + 1);
      step = script.next(yield statement);
    }
    return step.value;
  }
  const change = store.change.bind(store);
  const read = store.read.bind(store);
  store.change = <T>(c: Change<T>) => {
    transactions++;
    return change({ ...c, script: () => counting(`change ${c.name}`, c.script()) });
  };
  store.read = <T>(script: Script<T>) => read(counting("read", script));
  return { byCallSite, transactions: () => transactions };
}

/** How long a continuation's turn takes here: enough for its idle to come a millisecond or more after it fired. */
const TURN_MS = 5;

export async function perContinuation(sessions = 200): Promise<Figure[]> {
  const { db, cleanup } = scratch();
  let statements = 0;
  let counting = false;
  const connection = await openSqlite(db, { onStatement: () => void (counting && statements++) });
  const store = new SqliteStore(connection);
  const host = new FakeHost();
  const ids = Array.from({ length: sessions }, (_, i) => `ses_cost_${i}`);
  const todosOf = (closed: number): Array<[string, Todo["status"]]> =>
    TODOS.map((t, i) => [t, i < closed ? "completed" : "pending"]);
  const closed = new Map<string, number>();
  for (const id of ids) {
    host.setTodos(id, todosOf(0));
    host.addUserMessage(id, "go");
  }
  const config = { ...resolveConfig({}, {}), databasePath: db, toast: false, countdownSeconds: 0.05 };
  const enforcer = new Enforcer({ config, store, host, directory: "/bench" });
  // The continuation's turn, as OpenCode reports a model's: busy, a todo closed, idle. It takes a few milliseconds, as
  // any model's turn takes far more: an idle seen in the very millisecond its continuation fired is taken for one that
  // continuation answered (the database's times are in ms), and that session then waited for a person for good.
  host.onAccepted = (request) => {
    const id = request.sessionId;
    setTimeout(() => {
      enforcer.handleEvent(ev.status(id, "busy"));
      const done = (closed.get(id) ?? 0) + 1;
      closed.set(id, done);
      host.setTodos(id, todosOf(done));
      enforcer.handleEvent(ev.todos(id, todosOf(done)));
      enforcer.handleEvent(ev.status(id, "idle"));
      enforcer.handleEvent(ev.idle(id));
    }, TURN_MS);
  };
  await enforcer.start();
  const calls = countStoreCalls(store);
  const cpuBefore = process.cpuUsage();
  counting = true;
  // The first idle of each session (a person's turn ended), a few at a time as people's turns end.
  for (const id of ids) {
    enforcer.handleEvent(ev.idle(id));
    await sleep(1);
  }
  const finished = () =>
    connection.raw.all<{ n: number }>(
      "SELECT count(*) AS n FROM audit_events WHERE event = 'skipped' AND reason = 'todos_complete'",
    )[0]!.n;
  const giveUpAt = Date.now() + 120_000;
  while (finished() < sessions) {
    if (Date.now() > giveUpAt)
      throw new Error(`${sessions - finished()} of ${sessions} sessions never finished their todos (2 minutes)`);
    await sleep(50);
  }
  await enforcer.settled();
  const cpu = process.cpuUsage(cpuBefore);
  counting = false;
  await enforcer.dispose();
  connection.close();
  cleanup();

  const continuations = host.prompts.length;
  const expected = sessions * TODOS.length;
  if (continuations !== expected) throw new Error(`${continuations} continuations, expected ${expected}`);
  const per = (n: number) => n / continuations;
  // The row read alone, or with what other rows say of the session (`sessionState`).
  const readsRow = (site: string) => site.endsWith("→ session") || site.endsWith("→ sessionState");
  const sessionReads = [...calls.byCallSite].filter(([k]) => readsRow(k)).reduce((s, [, n]) => s + n, 0);
  const top = [...calls.byCallSite.entries()].sort((a, b) => b[1] - a[1]);
  process.stderr.write(
    `per continuation on SQLite (${sessions} sessions × ${TODOS.length}), the store's statements by call site:\n` +
      top.map(([site, n]) => `  ${per(n).toFixed(2).padStart(6)}  ${site}`).join("\n") +
      "\n",
  );
  const group = "per continuation (SQLite, the engine with a fake OpenCode)";
  const counted = `${continuations} continuations of ${sessions} sessions, each to its last todo`;
  const bounded = (name: string, value: number, unit: string, max: number, note?: string): Figure => ({
    group,
    name,
    median: value,
    unit,
    target: `≤ ${max}`,
    met: value <= max,
    ...(note ? { note } : {}),
  });
  return [
    bounded("SQL statements", per(statements), "statements", MAX_STATEMENTS, `${counted}; BEGIN and COMMIT included`),
    bounded("transactions", per(calls.transactions()), "transactions", MAX_TRANSACTIONS),
    bounded("reads of the session row", per(sessionReads), "reads", MAX_SESSION_READS),
    {
      group,
      name: "the engine's CPU",
      median: (cpu.user + cpu.system) / 1000 / continuations,
      unit: "ms",
      note: "the fake OpenCode's work included",
    },
  ];
}
