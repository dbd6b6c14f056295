// One engine process (Node with better-sqlite3, or Bun with bun:sqlite) for the crash and multi-process tests.
// It recovers what the database holds, then keeps making sessions go idle until told to stop or killed.
// Env: DB, HOST_URL, SESSIONS (how many), ROUNDS (idles per session, 0 = until killed), DIRECTORY, LEASE_MS,
// IDLE_EVERY_MS, PAUSE_BEFORE_PROMPT_MS. Prints one JSON line when done.
import { resolveConfig } from "../../src/config.js";
import { Enforcer } from "../../src/engine/enforcer.js";
import { openStore } from "../../src/store/open.js";
import { rpcHost } from "./rpc-host.js";

const env = process.env;
const sessions = Number(env.SESSIONS ?? 5);
const rounds = Number(env.ROUNDS ?? 0);
const idleEvery = Number(env.IDLE_EVERY_MS ?? 100);

const store = await openStore(env.DB!);
const config = {
  ...resolveConfig({}, {}),
  databasePath: env.DB!,
  countdownSeconds: Number(env.COUNTDOWN_SECONDS ?? 0.1),
  resumeWindowSeconds: 60,
  toast: false,
  stagnationLimit: 100_000,
  maxContinuations: 100_000,
  leaseMs: Number(env.LEASE_MS ?? 1000),
  retryBaseMs: 200,
};
const enforcer = new Enforcer({
  config,
  store,
  host: rpcHost(env.HOST_URL!, { pauseBeforePromptMs: Number(env.PAUSE_BEFORE_PROMPT_MS ?? 0) }),
  directory: env.DIRECTORY ?? "/crash/project",
});
const recovery = await enforcer.start();
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, recovery })}\n`);

let round = 0;
const sessionIds = Array.from({ length: sessions }, (_, i) => `${env.SESSION_PREFIX ?? "ses_"}${i}`);
while (rounds === 0 || round < rounds) {
  round++;
  // A random subset goes idle each tick: some countdowns are superseded, most run to their end.
  for (const id of sessionIds) if (Math.random() < 0.35) enforcer.handleEvent({ type: "session.idle", properties: { sessionID: id } });
  await new Promise((r) => setTimeout(r, idleEvery));
}
// Let every countdown armed so far run to its end.
const deadline = Date.now() + 30_000;
while (Date.now() < deadline) {
  await enforcer.settled();
  const armed = store.raw.all<{ n: number }>("SELECT count(*) AS n FROM countdowns WHERE state = 'armed' AND directory = ?", env.DIRECTORY ?? "/crash/project")[0]!.n;
  const pending = store.raw.all<{ n: number }>("SELECT count(*) AS n FROM injections WHERE status = 'pending'")[0]!.n;
  if (armed === 0 && pending === 0) break;
  await new Promise((r) => setTimeout(r, 50));
}
await enforcer.dispose();
store.close();
process.stdout.write(`${JSON.stringify({ done: true, pid: process.pid })}\n`);
