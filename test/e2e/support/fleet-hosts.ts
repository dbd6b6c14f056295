// The OpenCode servers a fleet test's replicas follow: real `opencode serve` processes with a scripted model, or
// simulated ones (test/support/sim-opencode, held to the real one by test/e2e/sim-opencode.test.ts) where the test is
// about the fleet's own logic rather than OpenCode. Either way each session needs the same continuations (its first
// turn leaves two todos open, each continuation completes one), and the servers say what they took.
import { join } from "node:path";
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import { startSimFleet, type SimFleet, type SimFleetOptions } from "../../support/sim-opencode/fleet.js";
import { OpenCodeServer } from "./opencode-server.js";
import { ScriptedModel, textOf, todowrite, type ModelRequest, type ScriptContext } from "./scripted-model.js";
import { freePort } from "./tcp-proxy.js";
import { HEADER } from "./world.js";

/** Each continuation completes one more todo: two open after the first turn, so two continuations per session. */
const STEPS: Array<Array<[string, string]>> = [
  [
    ["a", "completed"],
    ["b", "pending"],
    ["c", "pending"],
  ],
  [
    ["a", "completed"],
    ["b", "completed"],
    ["c", "pending"],
  ],
  [
    ["a", "completed"],
    ["b", "completed"],
    ["c", "completed"],
  ],
];
export const CONTINUATIONS_PER_SESSION = STEPS.length - 1;

/** How long a simulated turn lasts: about a real OpenCode's turn with the scripted model on this machine. */
const SIM_TURN_MS = 1000;

export interface FleetSession {
  server: number;
  id: string;
  /** Named in the session's first prompt (`fleet-tag: …`): how the scripted model tells sessions apart. */
  tag: string;
}

export interface FleetServer {
  url: string;
  client: OpencodeClient;
  /** Its log, for a failure's post-mortem. */
  output(): string;
}

export interface FleetHosts {
  readonly servers: FleetServer[];
  /** Starts `count` servers, every one on the same project path as pods mount one workspace. */
  start(count: number, root: string, project: string): Promise<void>;
  /** The continuations each session received, by session id: what the host saw is the ground truth. */
  continuations(sessions: readonly FleetSession[]): Map<string, number>;
  /** The replicas' calls a server refused (OpenCode logs a schema rejection for each payload it refuses). */
  refusals(): string[];
  stop(): Promise<void>;
}

function fleetScript(_request: ModelRequest, ctx: ScriptContext) {
  if (ctx.afterTool) return { text: "I will stop here for now." };
  const continuations = ctx.userTexts.filter((t) => t.includes(HEADER)).length;
  return { toolCalls: [todowrite(STEPS[Math.min(continuations, STEPS.length - 1)]!)] };
}

const tagOf = (request: ModelRequest) =>
  /fleet-tag: (\S+)/.exec(textOf(request.messages.find((m) => m.role === "user")?.content))?.[1];

/** Real `opencode serve` processes (no plugin, each with its own home) and the scripted model they all call. */
export class RealOpenCode implements FleetHosts {
  readonly servers: OpenCodeServer[] = [];
  private readonly model = new ScriptedModel(fleetScript);

  async start(count: number, root: string, project: string): Promise<void> {
    const modelUrl = await this.model.start();
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const options = { root: join(root, `pod-${i}`), modelUrl, pluginOptions: false as const, project, port };
      this.servers.push(new OpenCodeServer({ ...options, logLevel: "WARN" }));
    }
    await Promise.all(this.servers.map((s) => s.start(60_000)));
  }

  /** What the model received: a request whose last user message is a continuation, by the session's tag. */
  continuations(sessions: readonly FleetSession[]): Map<string, number> {
    const byTag = new Map<string, number>();
    for (const request of this.model.agentRequests()) {
      const last = request.messages.at(-1);
      if (last?.role !== "user" || !textOf(last.content).includes(HEADER)) continue;
      const tag = tagOf(request);
      if (tag) byTag.set(tag, (byTag.get(tag) ?? 0) + 1);
    }
    return new Map(sessions.map((s) => [s.id, byTag.get(s.tag) ?? 0]));
  }

  refusals(): string[] {
    return this.servers.flatMap((s) => s.output().match(/.*schema rejection.*/g) ?? []);
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
    await this.model.stop();
  }
}

/** Simulated OpenCode servers in this process: a first turn leaves the todos open, each prompt after it completes one. */
export class SimulatedOpenCode implements FleetHosts {
  servers: FleetServer[] = [];
  private fleet: SimFleet | undefined;

  /** `failTurn`: the provider's error a session's turn (1: its first) fails on, as a limit's (none by default). */
  constructor(private readonly failTurn?: SimFleetOptions["failTurn"]) {}

  async start(count: number, _root: string, project: string): Promise<void> {
    this.fleet = await startSimFleet({
      servers: count,
      sessionsPerServer: 0,
      todosPerSession: CONTINUATIONS_PER_SESSION,
      turnMs: SIM_TURN_MS,
      directoryOf: () => project,
      failTurn: this.failTurn,
    });
    this.servers = this.fleet.sims.map((sim) => ({
      url: sim.url,
      client: createOpencodeClient({ baseUrl: sim.url, directory: sim.directory }),
      // What it refused, and what each session took.
      output: () =>
        JSON.stringify(
          {
            refused: sim.refused,
            sessions: [...sim.sessions.values()].map(({ facts, prompts, doubled, afterDone, completed, busy }) => ({
              id: facts.id,
              prompts,
              doubled,
              afterDone,
              completed,
              busy,
            })),
          },
          null,
          1,
        ),
    }));
  }

  /** The prompts each session took after the one that started its first turn (a person's, in the test). */
  continuations(sessions: readonly FleetSession[]): Map<string, number> {
    const sims = this.fleet!.sims;
    return new Map(sessions.map((s) => [s.id, Math.max(0, (sims[s.server]!.sessions.get(s.id)?.prompts ?? 0) - 1)]));
  }

  refusals(): string[] {
    return this.fleet!.sims.flatMap((s) => s.refused);
  }

  async stop(): Promise<void> {
    await this.fleet?.stop();
  }
}
