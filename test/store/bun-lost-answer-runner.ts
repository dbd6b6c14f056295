// Under OpenCode's Bun, against the PostgreSQL server of PG_URL; prints one JSON line.
// MODE=swallow: one answer lost on purpose (lost-answer.ts): how the statement ended, whether its connection was
//   closed, whether the next one worked.
// MODE=load: the store's own statements (session changes under the session lock, the reads a look makes, heartbeats)
//   from many concurrent callers for SECONDS: how many were answered, failed, or never settled.
import { oweLook, TAKE } from "../../src/store/changes/look-owed.js";
import { skip } from "../../src/store/changes/skip.js";
import { openPg } from "../../src/store/pg/open.js";
import { PgStore } from "../../src/store/pg/pg-store.js";
import { sinceIdle } from "../../src/store/reads.js";
import { loseOneAnswer, outcomeOf, type Outcome } from "../support/lost-answer.js";

const url = process.env.PG_URL!;
const clientTimeoutMs = Number(process.env.CLIENT_TIMEOUT_MS ?? 2000);

async function load(): Promise<Record<string, unknown>> {
  const seconds = Number(process.env.SECONDS ?? 15);
  const callers = Number(process.env.CALLERS ?? 40);
  const sessions = Number(process.env.SESSIONS ?? 20);
  const store = new PgStore(await openPg(url, { clientTimeoutMs }));
  const tally = new Map<string, { answered: number; failed: number; never: number; errors: string[] }>();
  const note = (shape: string, o: Outcome) => {
    const t = tally.get(shape) ?? { answered: 0, failed: 0, never: 0, errors: [] };
    t[o.settled]++;
    if (o.error && t.errors.length < 3 && !t.errors.includes(o.error)) t.errors.push(o.error);
    tally.set(shape, t);
  };
  const owner = `bun-load-${process.pid}`;
  const until = performance.now() + seconds * 1000;
  const caller = async (n: number) => {
    for (let i = 0; performance.now() < until; i++) {
      const sessionId = `ses_load_${(n + i) % sessions}`;
      const scope = { sessionId, directory: "/load" };
      const now = Date.now();
      switch (i % 4) {
        case 0:
          note("change", await outcomeOf(() => store.change(oweLook(scope, now, { owe: now }))));
          break;
        case 1:
          note("skip", await outcomeOf(() => store.change(skip(scope, now, "busy", { n }, { look: TAKE }))));
          break;
        case 2:
          note("reads", await outcomeOf(() => store.read(sinceIdle(sessionId, now - 1000))));
          break;
        default:
          if (n % 10 === 0) note("heartbeat", await outcomeOf(() => store.heartbeat(owner, 30_000, "/load")));
          else note("reads", await outcomeOf(() => store.read(sinceIdle(sessionId))));
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, (_, n) => caller(n)));
  await Promise.race([store.close(), new Promise((resolve) => setTimeout(resolve, 3000))]);
  return Object.fromEntries(tally);
}

const result = process.env.MODE === "load" ? await load() : await loseOneAnswer(url, clientTimeoutMs);
// Exits once the line is written: an exit right after the write can cut a piped line short.
process.stdout.write(`${JSON.stringify({ runtime: `bun ${process.versions.bun}`, result })}\n`, () => process.exit(0));
