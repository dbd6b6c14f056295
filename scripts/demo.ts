// `npm run demo`: a real OpenCode server, offline, with a scripted model that stops with open todos. Watch the
// countdown and the continuations happen, then read the injection history, the audit trail and what each
// continuation cost back from SQLite. The model has a price, so OpenCode computes what each step cost.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBetterSqlite, type BetterSqlite } from "../src/store/sqlite/node-driver.js";
import { OpenCodeServer } from "../test/e2e/support/opencode-server.js";
import {
  ScriptedModel,
  todowrite,
  type ModelReply,
  type ModelRequest,
  type ScriptContext,
} from "../test/e2e/support/scripted-model.js";

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
const bold = paint("1");
const dim = paint("2");
const cyan = paint("36");
const yellow = paint("33");
const green = paint("32");

const started = Date.now();
const stamp = () => dim(`[+${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`);
const say = (text: string) => console.log(`${stamp()} ${text}`);

const TASKS = ["parse the command-line flags", "write the tests", "update the README"];

/** What the scripted model charges, in $ per million tokens (OpenCode's `cost` of a model). */
const PRICE = { input: 3, output: 15, cache_read: 0.3 };

/**
 * A model that does one todo per turn and then stops, as agents too often do. It reports what it used, as providers
 * do: each turn replays a longer transcript, mostly from the cache.
 */
function script(_request: ModelRequest, ctx: ScriptContext): ModelReply {
  const done = ctx.userTexts.filter((t) => t.includes("[SYSTEM REMINDER - TODO CONTINUATION]")).length + 1;
  const transcript = 9_000 + 6_000 * done;
  if (ctx.afterTool)
    return {
      text: done < TASKS.length ? "I finished one step; stopping here for now." : "All done.",
      usage: { prompt: transcript + 600, completion: 45, cached: transcript - 2_000 },
    };
  return {
    toolCalls: [todowrite(TASKS.map((t, i) => [t, i < done ? "completed" : i === done ? "in_progress" : "pending"]))],
    usage: { prompt: transcript, completion: 700, cached: transcript - 4_000 },
  };
}

// The demo reads the database back with better-sqlite3: without it, say so before starting OpenCode.
let Database: BetterSqlite;
try {
  Database = await loadBetterSqlite();
} catch (error) {
  console.error(`npm run demo: ${(error as Error).message}`);
  process.exit(1);
}
const CLONE = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

const root = mkdtempSync(join(tmpdir(), "todo-continuation-demo-"));
const dbPath = join(root, "todo-continuation.db");
const model = new ScriptedModel(script);
const server = new OpenCodeServer({
  root,
  modelUrl: await model.start(),
  pluginOptions: { databasePath: dbPath },
  modelCost: PRICE,
});

console.log(bold("opencode-todo-continuation demo"));
console.log(
  dim(`A real OpenCode server (opencode-ai 1.18.33) runs offline in ${root}, with a scripted model and this plugin.\n`),
);
say("starting opencode serve …");
await server.start();
say(`server listening on ${server.url}`);

const session = await server.client.session.create({ body: { title: "demo: build a small CLI" }, throwOnError: true });
const id = session.data.id;
const events = await server.client.event.subscribe();
let finished: () => void;
const done = new Promise<void>((resolve) => (finished = resolve));
let lastTodos = "";

void (async () => {
  for await (const raw of events.stream as AsyncIterable<{ type: string; properties: Record<string, any> }>) {
    const { type, properties: p } = raw;
    if (p?.sessionID && p.sessionID !== id) continue;
    if (type === "todo.updated") {
      const todos = p.todos as Array<{ content: string; status: string }>;
      const line = todos
        .map(
          (t) =>
            (t.status === "completed" ? green("✔") : t.status === "in_progress" ? yellow("▶") : "○") + " " + t.content,
        )
        .join("   ");
      if (line !== lastTodos) say(`todos   ${line}`);
      lastTodos = line;
    } else if (type === "session.idle") {
      say(cyan("session idle: the model ended its turn"));
    } else if (type === "tui.toast.show") {
      say(yellow(`toast   ${p.message}`));
    } else if (
      type === "message.part.updated" &&
      p.part?.type === "text" &&
      String(p.part.text).startsWith("[SYSTEM REMINDER - TODO CONTINUATION]")
    ) {
      const status = /\[Status: [^\]]+\]/.exec(p.part.text)?.[0] ?? "";
      say(bold(green(`continuation injected ${status}`)));
    } else if (
      type === "message.part.updated" &&
      p.part?.type === "text" &&
      p.part.text &&
      !p.part.synthetic &&
      p.part.time?.end
    ) {
      say(dim(`model   "${p.part.text}"`));
    }
  }
})();

say(`user    "Build a small CLI: flags, tests and README." ${dim(`(session ${id})`)}`);
await server.client.session.promptAsync({
  path: { id },
  body: { parts: [{ type: "text", text: "Build a small CLI: flags, tests and README." }] },
  throwOnError: true,
});

const db = () => new Database(dbPath, { readonly: true, fileMustExist: true });
const poll = setInterval(() => {
  try {
    const conn = db();
    const complete = conn
      .prepare("SELECT 1 FROM audit_events WHERE session_id = ? AND reason = 'todos_complete'")
      .get(id);
    conn.close();
    if (complete) finished();
  } catch {
    // The plugin creates the file on its first event.
  }
}, 200);
const timeout = setTimeout(() => finished(), 60_000);
await done;
clearInterval(poll);
clearTimeout(timeout);
say(cyan("all todos completed: the enforcer stands down (todos_complete)"));
await server.stop();
await model.stop();

function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return "(no rows)";
  const keys = Object.keys(rows[0]!);
  const cells = rows.map((r) => keys.map((k) => (r[k] === null ? "" : String(r[k]))));
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join("  ");
  return [bold(line(keys)), ...cells.map(line)].join("\n");
}

const conn = db();
const historySql = `SELECT datetime(created_at / 1000, 'unixepoch', 'localtime') AS at, status, agent, model, todos_open || '/' || todos_total AS open_of_total, id AS injection
FROM injections WHERE session_id = '${id}' ORDER BY created_at`;
const auditSql = `SELECT strftime('%H:%M:%f', at / 1000.0, 'unixepoch', 'localtime') AS at, event, coalesce(reason, '') AS reason, json_extract(detail, '$.countdownId') AS countdown
FROM audit_events WHERE session_id = '${id}' ORDER BY id`;
console.log(`\n${bold("Injection history")} ${dim("(from SQLite)")}`);
console.log(table(conn.prepare(historySql).all() as Array<Record<string, unknown>>));
console.log(`\n${bold("Audit trail")} ${dim("(every decision, with its reason)")}`);
console.log(table(conn.prepare(auditSql).all() as Array<Record<string, unknown>>));
const billsSql = `SELECT injection_id AS continuation, outcome, messages, steps, input_tokens AS input,
  cache_read_tokens AS cached, output_tokens AS output, tokens, printf('$%.4f', cost) AS cost, todos_closed, files_changed
FROM continuation_bills WHERE session_id = '${id}' ORDER BY continued_at`;
const totalSql = `SELECT sum(continuations) AS continuations, sum(tokens) AS tokens, printf('$%.4f', sum(cost)) AS cost,
  printf('%.0f%%', 100.0 * sum(cost) / max(session_cost)) AS share_of_session, sum(todos_closed) AS todos_closed,
  printf('$%.4f', sum(cost) / nullif(sum(todos_closed), 0)) AS cost_per_todo
FROM continuation_costs WHERE session_id = '${id}'`;
console.log(`\n${bold("What continuing cost")} ${dim("(each continuation's turn, as OpenCode priced it)")}`);
console.log(table(conn.prepare(billsSql).all() as Array<Record<string, unknown>>));
console.log(table(conn.prepare(totalSql).all() as Array<Record<string, unknown>>));
conn.close();
console.log(`\n${bold("Query it yourself:")}`);
console.log(
  `  sqlite3 -header -column ${dbPath} "SELECT created_local, status, agent, model, todos_open, late_ms FROM injection_history"`,
);
console.log(
  `  sqlite3 -header -column ${dbPath} "SELECT event, reason, count(*) AS n FROM audit_events GROUP BY event, reason ORDER BY n DESC"`,
);
console.log(
  dim(
    `  (or, after npm run build: node ${CLONE}/dist/cli/main.js --db ${dbPath} history | audit | cost | status | doctor)`,
  ),
);
console.log(
  `\n${bold("In OpenCode's own TUI:")} add the TUI plugin to ~/.config/opencode/tui.json for a sidebar panel with`,
);
console.log(
  `  the countdown (Esc cancels it, nothing is sent), the budget and why it stopped; stop/resume in the palette (ctrl+p):`,
);
console.log(`  { "plugin": ["file://${CLONE}/src/tui/index.ts"] }          ${dim("(docs/tui.md)")}`);
console.log(dim(`\nThe folder ${root} is left in place for you to look at.`));
process.exit(0);
