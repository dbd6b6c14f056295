// A simulated OpenCode fleet in a process of its own, so that its CPU is apart from the replicas' it serves:
//   npx tsx test/support/sim-opencode/main.ts --servers 100 --sessions 50 [--todos 3] [--turn-ms 1500]
//     [--latency-ms 0 | --latency-ms '{"session.messages":40}'] [--stagger-ms 0] [--directory-prefix /sim/project-] [--events full|lean] [--paused]
//     [--heartbeat-ms 10000]
// (or SIM_SERVERS, SIM_SESSIONS, SIM_TODOS, SIM_TURN_MS, SIM_LATENCY_MS, SIM_STAGGER_MS, SIM_DIRECTORY_PREFIX,
// SIM_EVENTS, SIM_PAUSED=1, SIM_HEARTBEAT_MS; a flag wins over its variable).
// Prints one JSON line per report on stdout: `{"type":"ready","servers":[{name,url,directory}…],"startMs",…}` once
// listening; `{"type":"stats",…}` on SIGUSR2 or the stdin line `stats`; `{"type":"final",…}` on SIGTERM/SIGINT or
// `stop`, then exits 0. Stdin also takes `begin` (the first turns of a --paused fleet) and `freeze <i> <ms>`.
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { startSimFleet, type SimFleet, type SimFleetOptions } from "./fleet.js";
import { SDK_CALLS, type SdkCall } from "./requests.js";
import type { EventDetail } from "./turn-events.js";

const FLAGS = {
  servers: "SIM_SERVERS",
  sessions: "SIM_SESSIONS",
  todos: "SIM_TODOS",
  "turn-ms": "SIM_TURN_MS",
  "latency-ms": "SIM_LATENCY_MS",
  "stagger-ms": "SIM_STAGGER_MS",
  "directory-prefix": "SIM_DIRECTORY_PREFIX",
  events: "SIM_EVENTS",
  "heartbeat-ms": "SIM_HEARTBEAT_MS",
} as const;

type Flag = keyof typeof FLAGS;

function optionsFrom(argv: string[], env: NodeJS.ProcessEnv): SimFleetOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...(Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: "string" }])) as Record<
        Flag,
        { type: "string" }
      >),
      paused: { type: "boolean" },
    },
  });
  const text = (flag: Flag) => (values[flag] as string | undefined) ?? env[FLAGS[flag]];
  const count = (flag: Flag, fallback?: number): number | undefined => {
    const raw = text(flag);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} must be a whole number ≥ 0, got "${raw}"`);
    return n;
  };
  const latency = text("latency-ms");
  const events = text("events") ?? "full";
  if (events !== "full" && events !== "lean") throw new Error(`--events must be full or lean, got "${events}"`);
  const prefix = text("directory-prefix") ?? "/sim/project-";
  return {
    servers: count("servers", 1)!,
    sessionsPerServer: count("sessions", 1)!,
    todosPerSession: count("todos"),
    turnMs: count("turn-ms"),
    latencyMs: latency?.trim().startsWith("{") ? latencyByCall(latency) : count("latency-ms"),
    startStaggerMs: count("stagger-ms"),
    heartbeatMs: count("heartbeat-ms"),
    directoryOf: (i) => `${prefix}${i}`,
    events: events as EventDetail,
    paused: values.paused === true || env.SIM_PAUSED === "1",
  };
}

/** `{"session.messages": 40, …}`: a delay per SDK call. */
function latencyByCall(json: string): Partial<Record<SdkCall, number>> {
  const given = JSON.parse(json) as Record<string, unknown>;
  for (const [call, ms] of Object.entries(given)) {
    if (!(SDK_CALLS as readonly string[]).includes(call))
      throw new Error(`--latency-ms names "${call}", which is none of ${SDK_CALLS.join(", ")}`);
    if (typeof ms !== "number" || ms < 0) throw new Error(`--latency-ms: ${call} must be a number ≥ 0`);
  }
  return given as Partial<Record<SdkCall, number>>;
}

const print = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

function command(fleet: SimFleet, line: string, stop: () => void): void {
  const [verb, ...args] = line.trim().split(/\s+/);
  if (verb === "stats") return print({ type: "stats", ...fleet.stats() });
  if (verb === "begin") return fleet.begin();
  if (verb === "stop") return stop();
  if (verb === "freeze") {
    const [i, ms] = args.map(Number);
    try {
      fleet.freeze(i!, ms!);
    } catch (error) {
      print({ type: "error", message: (error as Error).message });
    }
    return;
  }
  if (verb) print({ type: "error", message: `unknown command "${line.trim()}" (stats, begin, freeze <i> <ms>, stop)` });
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2), process.env);
  const started = performance.now();
  const fleet = await startSimFleet(options);
  print({
    type: "ready",
    servers: fleet.servers,
    startMs: Math.round(performance.now() - started),
    rssBytes: process.memoryUsage.rss(),
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    print({ type: "final", ...fleet.stats() });
    void fleet.stop().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("SIGUSR2", () => print({ type: "stats", ...fleet.stats() }));
  createInterface({ input: process.stdin }).on("line", (line) => command(fleet, line, stop));
}

main().catch((error: unknown) => {
  process.stderr.write(`sim-opencode: ${(error as Error).message}\n`);
  process.exit(2);
});
