// The simulated OpenCode (test/support/sim-opencode/, what `npm run bench:fleet` runs by the thousand) against a real
// OpenCode 1.18.33: the same requests to both — every call the service makes, around one first turn and one prompt —
// and the same shapes back. Compared by shape (keys and JSON types, recursively), not by value; the events of a turn
// by type in order, and each kind of event by shape.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exercise, type Exercise } from "../support/sim-opencode/conformance.js";
import { sessionOf, type RecordedEvent } from "../support/sim-opencode/event-recorder.js";
import { startSimFleet, type SimFleet } from "../support/sim-opencode/fleet.js";
import { shapeDifferences, shapeOf } from "../support/sim-opencode/shapes.js";
import { OpenCodeServer } from "./support/opencode-server.js";
import { ScriptedModel, todowrite, type ModelReply, type ScriptContext } from "./support/scripted-model.js";

/** Long enough for the reads made while a turn runs to find it running, on both. */
const TURN_MS = 800;

/** A turn as the sim plays it: the first writes three open todos, each later prompt completes one more. */
function script(_request: unknown, ctx: ScriptContext): ModelReply {
  if (ctx.afterTool) return { text: "I will stop here for now." };
  const done = ctx.userTexts.length - 1;
  const todos = ["a", "b", "c"].map((content, i): [string, string] => [content, i < done ? "completed" : "pending"]);
  return { delayMs: TURN_MS, toolCalls: [todowrite(todos)] };
}

/** Events about the instance rather than a session (providers and plugins loading): the sim has none to publish. */
const INSTANCE_EVENTS = new Set(["plugin.added", "catalog.updated", "reference.updated", "integration.updated"]);

/**
 * An event's type with what tells its kinds apart: the role, the part's type and state, the status. An assistant
 * message's update is `created` or `completed` by what it carries; or, `byArrival`, its first update is `created`:
 * a busy OpenCode may publish a message's creation with what the message holds by the time the event is sent.
 */
function kindsOf(events: RecordedEvent[], byArrival = false): string[] {
  const users = new Set<string>();
  const assistants = new Set<string>();
  return events.map((e) => {
    const p = e.properties as Record<string, any>;
    if (e.type === "message.updated") {
      if (p.info.role === "user") users.add(p.info.id);
      if (p.info.role === "user") return "message.updated:user";
      const first = !assistants.has(p.info.id);
      assistants.add(p.info.id);
      const created = byArrival ? first : !p.info.time.completed;
      return `message.updated:assistant:${created ? "created" : "completed"}`;
    }
    if (e.type === "message.part.updated") {
      const part = p.part;
      if (users.has(part.messageID)) return `message.part.updated:${part.type}:user`;
      const state = part.state?.status ?? (part.type === "text" ? (part.time?.end ? "done" : "streaming") : "");
      return `message.part.updated:${part.type}${state ? `:${state}` : ""}`;
    }
    if (e.type === "session.status") return `session.status:${p.status.type}`;
    return e.type;
  });
}

/** Events whose place among the busy statuses varies between runs of the same OpenCode. */
const UNPLACED = new Set(["session.updated", "session.diff"]);

/** The kinds in order without the unplaced ones, a run of one kind as one. */
function collapse(kinds: string[]): string[] {
  return kinds.filter((k) => !UNPLACED.has(k)).filter((k, i, placed) => k !== placed[i - 1]);
}

function counts(kinds: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const kind of kinds) out[kind] = (out[kind] ?? 0) + 1;
  return out;
}

const significant = (events: RecordedEvent[]) => events.filter((e) => !INSTANCE_EVENTS.has(e.type));

describe("the simulated OpenCode against OpenCode 1.18.33", () => {
  const root = mkdtempSync(join(tmpdir(), "tc-sim-conformance-"));
  const model = new ScriptedModel(script);
  let server: OpenCodeServer;
  let fleet: SimFleet;
  let real: Exercise;
  let sim: Exercise;

  beforeAll(async () => {
    const modelUrl = await model.start();
    server = new OpenCodeServer({
      root,
      modelUrl,
      pluginOptions: false,
      logLevel: "WARN",
      modelCost: { input: 3, output: 15 },
    });
    [, fleet] = await Promise.all([
      server.start(),
      startSimFleet({ servers: 1, sessionsPerServer: 1, turnMs: TURN_MS }),
    ]);
    [real, sim] = await Promise.all([
      exercise({ url: server.url, directory: server.project }),
      exercise(fleet.servers[0]!),
    ]);
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
    await server?.stop();
    await model.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("answers every call the service makes with OpenCode's status, content type and shape", () => {
    expect([...sim.answers.keys()]).toEqual([...real.answers.keys()]);
    const differences: string[] = [];
    for (const [name, expected] of real.answers) {
      const actual = sim.answers.get(name)!;
      if (actual.status !== expected.status)
        differences.push(`${name}: status ${actual.status}, OpenCode ${expected.status}`);
      if (actual.contentType !== expected.contentType)
        differences.push(`${name}: content type ${actual.contentType}, OpenCode ${expected.contentType}`);
      for (const line of shapeDifferences(shapeOf(expected.body), shapeOf(actual.body), name)) differences.push(line);
    }
    expect(differences).toEqual([]);
  });

  // A turn's events up to its session.idle (what follows arrives in the next phase, sooner or later). session.updated
  // and session.diff come before or after a busy status, or after the idle, from run to run: not placed, and counted
  // over the session's whole stream.
  it("publishes a session's events for its first turn and for a prompt in OpenCode's order and number", () => {
    const placed = (kinds: string[]) => kinds.filter((k) => !UNPLACED.has(k));
    for (const phase of ["first-turn", "prompt"]) {
      const [expected, actual] = [real, sim].map((run) => {
        const kinds = kindsOf(significant(run.stream.of(phase, run.session)), true);
        return kinds.slice(0, kinds.indexOf("session.idle") + 1);
      });
      expect(expected).toContain("session.idle");
      expect({ phase, order: collapse(actual!), counts: counts(placed(actual!)) }).toEqual({
        phase,
        order: collapse(expected!),
        counts: counts(placed(expected!)),
      });
    }
    const unplaced = (run: Exercise) =>
      counts(kindsOf(run.stream.events.filter((e) => sessionOf(e) === run.session)).filter((k) => UNPLACED.has(k)));
    expect(unplaced(real)).toEqual({ "session.diff": expect.any(Number), "session.updated": expect.any(Number) });
    expect(unplaced(sim)).toEqual(unplaced(real));
  });

  it("publishes a toast it is asked for", () => {
    const toasts = (run: Exercise) => run.stream.of("reads").filter((e) => e.type === "tui.toast.show");
    expect(toasts(sim).map((e) => e.properties)).toEqual(toasts(real).map((e) => e.properties));
    expect(toasts(real)).toHaveLength(1);
  });

  it("publishes each kind of event in OpenCode's shape", () => {
    const shapes = (run: Exercise) => {
      const events = significant(run.stream.events).filter((e) => [run.session, undefined].includes(sessionOf(e)));
      const kinds = kindsOf(events);
      const byKind = new Map<string, Set<string>>();
      events.forEach((e, i) => {
        const set = byKind.get(kinds[i]!) ?? new Set<string>();
        set.add(JSON.stringify(shapeOf(e.envelope)));
        byKind.set(kinds[i]!, set);
      });
      return byKind;
    };
    const [expected, actual] = [shapes(real), shapes(sim)];
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    const differences: string[] = [];
    for (const [kind, set] of expected) {
      const sorted = (s: Set<string>) => [...s].sort().map((text) => JSON.parse(text));
      const lines = shapeDifferences({ "[]": sorted(set) }, { "[]": sorted(actual.get(kind)!) }, kind);
      differences.push(...lines);
    }
    expect(differences).toEqual([]);
  });

  it("frames its event stream as OpenCode does", () => {
    for (const run of [real, sim]) {
      expect(run.stream.frames[0]).toMatch(
        /^data: \{"id":"evt_[0-9a-f]{12}[0-9A-Za-z]{14}","type":"server.connected","properties":\{\}\}\n\n$/,
      );
      for (const frame of run.stream.frames) expect(frame).toMatch(/^data: \{[^\n]*\}\n\n$/);
    }
    const headers = (run: Exercise) => {
      const { "content-type": type, "cache-control": cache, "x-accel-buffering": buffering } = run.stream.headers;
      return { type, cache, buffering };
    };
    expect(headers(sim)).toEqual(headers(real));
  });

  it("renders a premade session, after its first turn, as OpenCode renders the session after its first turn", async () => {
    const [simServer] = fleet.servers;
    const premade = [...fleet.sims[0]!.sessions.keys()].find((id) => id !== sim.session && id !== sim.warmUp)!;
    const query = `directory=${encodeURIComponent(simServer!.directory)}`;
    for (const [route, name] of [
      ["", "reads.get"],
      ["/todo", "reads.todo"],
      ["/message", "reads.messages"],
    ] as const) {
      const body = await (await fetch(`${simServer!.url}/session/${premade}${route}?${query}`)).json();
      expect(shapeDifferences(shapeOf(real.answers.get(name)!.body), shapeOf(body), name)).toEqual([]);
    }
  });
});
