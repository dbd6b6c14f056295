// The simulated OpenCode (test/support/sim-opencode/, what `npm run bench:fleet` runs by the thousand) against a real
// OpenCode 1.18.33: the same requests to both — every call the service makes, around one first turn and one prompt —
// and the same shapes back. Compared by shape (keys and JSON types, recursively), not by value; the events of a turn
// by type in order, and each kind of event by shape.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exercise, LIMITED_PROMPT, LIMITED_TEXT, type Exercise } from "../support/sim-opencode/conformance.js";
import { sessionOf, STREAM_ONLY_EVENTS, type RecordedEvent } from "../support/sim-opencode/event-recorder.js";
import { startSimFleet, type SimFleet } from "../support/sim-opencode/fleet.js";
import { shapeDifferences, shapeOf } from "../support/sim-opencode/shapes.js";
import { OpenCodeServer } from "./support/opencode-server.js";
import { ScriptedModel, todowrite, type ModelReply, type ScriptContext } from "./support/scripted-model.js";

const EVENT_TAP = fileURLToPath(new URL("../support/sim-opencode/event-tap-plugin.ts", import.meta.url));

/** Long enough for the reads made while a turn runs to find it running, on both. */
const TURN_MS = 800;

/**
 * A turn as the sim plays it: the first writes three open todos, each later prompt completes one more; the `limited`
 * phase's prompt is answered with a provider's usage limit (a 400 OpenCode does not retry).
 */
function script(_request: unknown, ctx: ScriptContext): ModelReply {
  if (ctx.userTexts.at(-1) === LIMITED_PROMPT)
    return { status: 400, text: LIMITED_TEXT, errorType: "invalid_request_error" };
  if (ctx.afterTool) return { text: "I will stop here for now." };
  const done = ctx.userTexts.length - 1;
  const todos = ["a", "b", "c"].map((content, i): [string, string] => [content, i < done ? "completed" : "pending"]);
  return { delayMs: TURN_MS, toolCalls: [todowrite(todos)] };
}

/** The error the real model's answer becomes in OpenCode (its headers as Node's server sends an answer). */
const LIMITED_ERROR = {
  message: LIMITED_TEXT,
  statusCode: 400,
  isRetryable: false,
  responseHeaders: {
    connection: "keep-alive",
    "content-type": "application/json",
    date: new Date().toUTCString(),
    "keep-alive": "timeout=5",
    "transfer-encoding": "chunked",
  },
  responseBody: JSON.stringify({ error: { message: LIMITED_TEXT, type: "invalid_request_error" } }),
};

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

/** The events a run streamed about its session or about none, without the instance's own. */
const streamedEvents = (run: Exercise) =>
  significant(run.stream.events).filter((e) => [run.session, undefined].includes(sessionOf(e)));

/** An assistant message's update as published at the end of a step: its `finish` set, its `time.completed` not yet. */
function finishedBeforeCompleted(e: RecordedEvent): boolean {
  const info = e.properties.info as { role?: string; finish?: string; time?: { completed?: number } } | undefined;
  return e.type === "message.updated" && info?.role === "assistant" && !!info.finish && !info.time?.completed;
}

/** Each kind of event (kindsOf) with the shapes its envelopes came in. */
function shapesByKind(events: RecordedEvent[]): Map<string, Set<string>> {
  const kinds = kindsOf(events);
  const byKind = new Map<string, Set<string>>();
  events.forEach((e, i) => {
    const set = byKind.get(kinds[i]!) ?? new Set<string>();
    set.add(JSON.stringify(shapeOf(e.envelope)));
    byKind.set(kinds[i]!, set);
  });
  return byKind;
}

/** Where `actual`'s kinds of event, or their shapes, differ from `expected`'s. */
function shapeDifferencesByKind(expectedEvents: RecordedEvent[], actualEvents: RecordedEvent[]): string[] {
  const [expected, actual] = [shapesByKind(expectedEvents), shapesByKind(actualEvents)];
  const sortedKinds = (m: Map<string, unknown>) => [...m.keys()].sort();
  if (sortedKinds(actual).join() !== sortedKinds(expected).join())
    return [`kinds ${sortedKinds(actual).join(", ")}; OpenCode ${sortedKinds(expected).join(", ")}`];
  const differences: string[] = [];
  for (const [kind, set] of expected) {
    const sorted = (s: Set<string>) => [...s].sort().map((text) => JSON.parse(text));
    differences.push(...shapeDifferences({ "[]": sorted(set) }, { "[]": sorted(actual.get(kind)!) }, kind));
  }
  return differences;
}

describe("the simulated OpenCode against OpenCode 1.18.33", () => {
  const root = mkdtempSync(join(tmpdir(), "tc-sim-conformance-"));
  const model = new ScriptedModel(script);
  /** What the real server's plugins hear (event-tap-plugin.ts), a JSON line an event. */
  const hookEvents = join(root, "hook-events.jsonl");
  let server: OpenCodeServer;
  let fleet: SimFleet;
  let real: Exercise;
  let sim: Exercise;

  beforeAll(async () => {
    const modelUrl = await model.start();
    server = new OpenCodeServer({
      root,
      modelUrl,
      pluginSpec: pathToFileURL(EVENT_TAP).href,
      pluginOptions: { file: hookEvents },
      logLevel: "WARN",
      modelCost: { input: 3, output: 15 },
    });
    [, fleet] = await Promise.all([
      server.start(),
      startSimFleet({
        servers: 1,
        sessionsPerServer: 1,
        turnMs: TURN_MS,
        // The exercised session's third turn is the `limited` phase's (its first turn, a prompt, then that one).
        failTurn: (_, turn) => (turn === 3 ? LIMITED_ERROR : undefined),
      }),
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
        // A heartbeat is on OpenCode's 10 s clock, not the turn's: a turn slowed by a loaded machine held one.
        const kinds = kindsOf(significant(run.stream.of(phase, run.session)), true).filter(
          (k) => k !== "server.heartbeat",
        );
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

  it("ends a turn that fails on a provider's error as OpenCode does: the error, idle, the message keeping it, idle", () => {
    const [expected, actual] = [real, sim].map((run) =>
      collapse(kindsOf(significant(run.stream.of("limited", run.session))).filter((k) => k !== "server.heartbeat")),
    );
    expect(expected).toContain("session.error");
    expect(actual).toEqual(expected);
    const error = (run: Exercise) => run.stream.of("limited").find((e) => e.type === "session.error")!.properties;
    expect(shapeDifferences(shapeOf(error(real)), shapeOf(error(sim)), "session.error")).toEqual([]);
    expect((error(sim).error as { data: unknown }).data).toMatchObject({ message: LIMITED_TEXT, statusCode: 400 });
  });

  // The e2e plugin host (test/e2e/support/plugin-host.ts) hands a plugin the simulated server's stream: that is what
  // OpenCode's own plugins hear only if OpenCode hands them what it streams, in the same envelope and order, and
  // nothing of the stream's own (its connection and heartbeats are the /event route's, not the bus's).
  it("hands its plugins' event hook the events it streams, in order, without the stream's own", () => {
    const heard: RecordedEvent[] = readFileSync(hookEvents, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as RecordedEvent["envelope"])
      .map((envelope) => ({
        phase: "",
        type: String(envelope.type),
        properties: envelope.properties as Record<string, unknown>,
        envelope,
      }));
    const idOf = (e: RecordedEvent) => String(e.envelope.id);
    const streamed = real.stream.events.filter((e) => !STREAM_ONLY_EVENTS.has(e.type));
    const streamedIds = new Set(streamed.map(idOf));
    // The stream closed at the end of the exercise while the hook heard on: what both got is compared.
    const heardWhileStreamed = heard.filter((e) => streamedIds.has(idOf(e)));
    expect(streamed.length).toBeGreaterThan(50);
    expect(heardWhileStreamed.map(idOf)).toEqual(streamed.map(idOf));
    expect(real.stream.events.filter((e) => STREAM_ONLY_EVENTS.has(e.type)).length).toBeGreaterThan(0);
    expect(heard.filter((e) => STREAM_ONLY_EVENTS.has(e.type))).toEqual([]);
    // A plugin hears an event as it is published; the stream writes the same object later, as it has grown by then.
    // So a plugin alone hears each step's assistant message with its `finish` but not yet its `time.completed`, which
    // the stream shows completed. The plugin reads neither `finish` nor the bill from events (src/core/events.ts: an
    // assistant message's event is its times and model), so to it this is the running message the simulated stream
    // sends. Apart from it, each kind as heard has the simulated stream's shapes.
    const heardOfSession = significant(heardWhileStreamed).filter((e) =>
      [real.session, undefined].includes(sessionOf(e)),
    );
    expect(heardOfSession.filter(finishedBeforeCompleted).length).toBeGreaterThan(0);
    const simBusEvents = streamedEvents(sim).filter((e) => !STREAM_ONLY_EVENTS.has(e.type));
    const comparable = heardOfSession.filter((e) => !finishedBeforeCompleted(e));
    expect(shapeDifferencesByKind(comparable, simBusEvents)).toEqual([]);
  });

  it("publishes a toast it is asked for", () => {
    const toasts = (run: Exercise) => run.stream.of("reads").filter((e) => e.type === "tui.toast.show");
    expect(toasts(sim).map((e) => e.properties)).toEqual(toasts(real).map((e) => e.properties));
    expect(toasts(real)).toHaveLength(1);
  });

  it("publishes each kind of event in OpenCode's shape", () => {
    expect(shapeDifferencesByKind(streamedEvents(real), streamedEvents(sim))).toEqual([]);
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
