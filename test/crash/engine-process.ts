// One engine process (Node with better-sqlite3, or Bun with bun:sqlite) for the crash and multi-process tests.
// It recovers what the database holds, then makes sessions go idle:
//   IDLE_MODE=random (default): each tick a random subset of SESSIONS goes idle, for ROUNDS ticks (0: until killed);
//   IDLE_MODE=once: every session goes idle exactly once; then the process stays up (STAY_MS) or until killed;
//   IDLE_MODE=park: every session's turn fails on a rate limit (retry-after RETRY_AFTER s, 1 by default) and it goes
//   idle: each is parked until then, woken (spread over WAKE_JITTER_SECONDS) and continued once;
//   with VERIFY_COMMAND, a finished list is checked by it (in DIRECTORY, which must exist) before it is done.
// Then it waits until nothing is armed or pending in its scope and prints {"done":true}.
// Env: DB, HOST_URL, SESSIONS, SESSION_PREFIX, ROUNDS, DIRECTORY, LEASE_MS, IDLE_EVERY_MS, COUNTDOWN_SECONDS,
// PAUSE_BEFORE_PROMPT_MS, STAY_MS, RETRY_AFTER, WAKE_JITTER_SECONDS, VERIFY_COMMAND.
import { resolveConfig } from "../../src/config/resolve.js";
import { Enforcer } from "../../src/engine/enforcer.js";
import type { HostPort } from "../../src/host/port.js";
import { openStore } from "../../src/store/open/open.js";
import { rpcHost } from "./rpc-host.js";

const env = process.env;
const sessions = Number(env.SESSIONS ?? 5);
const rounds = Number(env.ROUNDS ?? 0);
const idleEvery = Number(env.IDLE_EVERY_MS ?? 100);
const mode = env.IDLE_MODE ?? "random";
const directory = env.DIRECTORY ?? "/crash/project";

const store = await openStore(env.DB!, { kind: "service" });
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
  busyTimeoutMs: 5000,
  wakeJitterSeconds: Number(env.WAKE_JITTER_SECONDS ?? 1),
  verify: env.VERIFY_COMMAND ? { command: env.VERIFY_COMMAND, timeoutSeconds: 60, maxRuns: 5 } : null,
};
const rpc = rpcHost(env.HOST_URL!, { pauseBeforePromptMs: Number(env.PAUSE_BEFORE_PROMPT_MS ?? 0) });
const host: HostPort = {
  ...rpc,
  // A continuation starts a turn, as in OpenCode: without that sign each one counts as never started, and every
  // session gives up after `maxRetries` of them, long before the kills run out.
  async prompt(request, signal) {
    await rpc.prompt(request, signal);
    enforcer.handleEvent({
      type: "session.status",
      properties: { sessionID: request.sessionId, status: { type: "busy" } },
    });
  },
};
const enforcer = new Enforcer({ config, store, host, directory });
const recovery = await enforcer.start();
process.stdout.write(
  `${JSON.stringify({ ready: true, pid: process.pid, runtime: process.versions.bun ? "bun" : "node", recovery })}\n`,
);

const sessionIds = Array.from({ length: sessions }, (_, i) => `${env.SESSION_PREFIX ?? "ses_"}${i}`);
const idle = (id: string) => enforcer.handleEvent({ type: "session.idle", properties: { sessionID: id } });
if (mode === "park") {
  for (const sessionID of sessionIds) {
    const data = {
      message: "Too Many Requests",
      statusCode: 429,
      isRetryable: true,
      responseHeaders: { "retry-after": env.RETRY_AFTER ?? "1" },
    };
    enforcer.handleEvent({ type: "session.error", properties: { sessionID, error: { name: "APIError", data } } });
    idle(sessionID);
  }
  process.stdout.write(`${JSON.stringify({ idled: sessionIds.length })}\n`);
} else if (mode === "once") {
  for (const id of sessionIds) idle(id);
  process.stdout.write(`${JSON.stringify({ idled: sessionIds.length })}\n`);
  await new Promise((r) => setTimeout(r, Number(env.STAY_MS ?? 0)));
} else {
  for (let round = 0; rounds === 0 || round < rounds; round++) {
    // A random subset goes idle each tick: some countdowns are superseded, most run to their end.
    for (const id of sessionIds) if (Math.random() < 0.35) idle(id);
    await new Promise((r) => setTimeout(r, idleEvery));
  }
}
// Let every park held so far wake, and every countdown armed so far run to its end.
const count = async (sql: string) => Number((await store.reader.all<{ n: number | string }>(sql, directory))[0]!.n);
// Long enough for an enforcer that paused on a failed read (Bun's SQL client, see src/store/pg/open.ts) to recover and
// fire what it holds: leaving earlier would release armed countdowns that nobody is left to adopt.
const deadline = Date.now() + 180_000;
while (Date.now() < deadline) {
  await enforcer.settled();
  // This wait's own read may fail like any other (the enforcer pauses and recovers; so does the wait): Bun's SQL client
  // fails a query in flight when its connection's idle timer fires (oven-sh/bun#30646).
  const open = await Promise.all([
    count("SELECT count(*) AS n FROM countdowns WHERE state = 'armed' AND directory = ?"),
    count("SELECT count(*) AS n FROM injections WHERE status = 'pending' AND directory = ?"),
    // Parks held, and woken parks whose look is still owed: a wake's continuation is still to come.
    // Checks running, and the looks owed that run one again.
    ...(config.verify
      ? [
          count("SELECT count(*) AS n FROM verifications WHERE state = 'running' AND directory = ?"),
          count("SELECT count(*) AS n FROM sessions WHERE recheck_at IS NOT NULL AND directory = ?"),
        ]
      : []),
    ...(mode === "park"
      ? [
          count("SELECT count(*) AS n FROM parks WHERE state = 'parked' AND directory = ?"),
          count("SELECT count(*) AS n FROM sessions WHERE recheck_at IS NOT NULL AND directory = ?"),
        ]
      : []),
  ]).then(
    (counts) => counts.reduce((a, b) => a + b, 0),
    (error: Error) => (process.stderr.write(`the wait's read failed, read again: ${error.message}\n`), -1),
  );
  if (open === 0) break;
  await new Promise((r) => setTimeout(r, open < 0 ? 500 : 50));
}
await enforcer.dispose();
await store.close();
process.stdout.write(`${JSON.stringify({ done: true, pid: process.pid })}\n`);
