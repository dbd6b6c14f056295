// What a simulated server and session cost, measured (not a test: run it on a quiet machine):
//   node --expose-gc --import tsx test/support/sim-opencode/measure.ts [servers=1000] [sessions=50]
//     [cpu servers=200] [cpu sessions=sessions]
// Memory: the heap and RSS a server costs (listening, no session), a session before its first turn, and a session
// after its whole run (four turns, three continuations with the service's own prompt text). CPU: a fleet in a process
// of its own (main.ts) driven to the end by the tiny client from this one, with every event (`full`) and with `lean`.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { renderPrompt, transcriptLine } from "../../../src/core/prompt.js";
import { newMessageId } from "../../../src/engine/ids.js";
import { todoItems } from "./payloads.js";
import { startSimFleet, type SimServerInfo, type SimStats } from "./fleet.js";
import { TinyClient } from "./tiny-client.js";
import { sleep, waitFor } from "../wait-for.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const settled = () => {
  gc();
  gc();
  return process.memoryUsage();
};
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

async function memory(servers: number, sessions: number): Promise<void> {
  const base = settled();
  const empty = await startSimFleet({ servers, sessionsPerServer: 0, paused: true });
  const withServers = settled();
  await empty.stop();
  const fleet = await startSimFleet({ servers, sessionsPerServer: sessions, paused: true, turnMs: 5 });
  const premade = settled();
  fleet.begin();
  const all = fleet.sims.flatMap((s) => [...s.sessions.values()]);
  // Every session continued until its todos are done, with the prompt the service sends (about 700 characters).
  while (all.some((s) => !s.finished)) {
    for (const s of all) {
      if (s.busy || s.finished) continue;
      const todos = todoItems(s.completed, 3);
      const text = renderPrompt(todos, `inj_${newMessageId().slice(4, 20)}`);
      s.prompt(
        {
          messageID: newMessageId(),
          parts: [
            { type: "text", text, synthetic: true },
            { type: "text", text: transcriptLine(todos) },
          ],
        },
        Date.now(),
      );
    }
    await sleep(20);
  }
  const ran = settled();
  const count = servers * sessions;
  console.log(
    `memory, ${servers} servers × ${sessions} sessions: a server ${kb((withServers.heapUsed - base.heapUsed) / servers)} heap, ` +
      `${kb((withServers.rss - base.rss) / servers)} RSS; a session ${kb((premade.heapUsed - base.heapUsed - (withServers.heapUsed - base.heapUsed)) / count)} heap before its first turn, ` +
      `${kb((ran.heapUsed - premade.heapUsed) / count)} more after 4 turns and 3 continuations; RSS ${(ran.rss / 1e6).toFixed(0)} MB in all`,
  );
  await fleet.stop();
}

/** A fleet in its own process, driven by the tiny client; its CPU per turn, per answer and per event. */
async function cpu(servers: number, sessions: number, events: "full" | "lean"): Promise<void> {
  const main = join(import.meta.dirname, "main.ts");
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      main,
      "--servers",
      String(servers),
      "--sessions",
      String(sessions),
      "--turn-ms",
      "300",
      "--stagger-ms",
      "2000",
      "--paused",
      "--events",
      events,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve) => lines.once("line", (l) => resolve(JSON.parse(l))));
  const ready = (await next()) as { servers: SimServerInfo[]; rssBytes: number };
  const ask = async () => {
    const answer = next();
    child.stdin!.write("stats\n");
    return (await answer) as unknown as SimStats;
  };
  const client = new TinyClient(ready.servers);
  await client.start();
  const before = await ask();
  const followed = (before.rssBytes - ready.rssBytes) / servers;
  child.stdin!.write("begin\n");
  let last = before;
  let backlog = 0;
  let heap = 0;
  const finished = async () => {
    last = await ask();
    backlog = Math.max(backlog, last.streamBacklogBytes);
    heap = Math.max(heap, last.heapUsedBytes);
    return last.finished === servers * sessions;
  };
  await waitFor("the sim fleet finished", finished, {
    timeoutMs: 600_000,
    interval: 500,
  });
  await client.stop();
  child.stdin!.write("stop\n");
  const cpuMs = last.cpuUserMs + last.cpuSystemMs - before.cpuUserMs - before.cpuSystemMs;
  const per = (n: number) => `${((cpuMs * 1000) / n).toFixed(0)} µs`;
  console.log(
    `cpu, ${servers} × ${sessions}, ${events} events: ${last.turns} turns, ${last.requests} answers, ${last.events} events ` +
      `in ${(last.elapsedMs / 1000).toFixed(1)} s; sim CPU ${cpuMs} ms: ${per(last.turns)} a turn (with its share of ` +
      `answers and events), ${per(last.requests + last.events)} an answer or event; a followed server's stream ` +
      `${kb(followed)} RSS; RSS at the end ${(last.rssBytes / 1e6).toFixed(0)} MB (heap at most ${(heap / 1e6).toFixed(0)} MB, ` +
      `event backlog at most ${(backlog / 1e6).toFixed(1)} MB); ` +
      `doubled ${last.doubled}, lost ${last.unfinished}`,
  );
}

// The CPU runs follow every server from this one process, whose parsing of the streams is slower than the sim's
// writing of them: a smaller fleet (by default) keeps that from being what is measured.
const [servers = 1000, sessions = 50, cpuServers = 200, cpuSessions = sessions] = process.argv.slice(2).map(Number);
await memory(servers, sessions);
await cpu(cpuServers, cpuSessions, "full");
await cpu(cpuServers, cpuSessions, "lean");
process.exit(0);
