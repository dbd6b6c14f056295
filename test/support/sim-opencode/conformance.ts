// The same requests, to a real OpenCode and to a simulated one: every call the service makes through the SDK (with
// the `directory` query it sends), in the order a continuation makes them, around one first turn and one prompt,
// while the event stream is recorded. What comes back is kept as answers (status, content type, body) and events by
// phase, for test/e2e/sim-opencode.test.ts to compare by shape.
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import { newMessageId } from "../../../src/engine/ids.js";
import { waitFor } from "../wait-for.js";
import { EventRecorder } from "./event-recorder.js";

export interface Target {
  url: string;
  directory: string;
}

export interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
}

export interface Exercise {
  answers: Map<string, Answer>;
  stream: EventRecorder;
  /** The session the exercise created, and the one it warmed the instance up with. */
  session: string;
  warmUp: string;
}

/** A session id no server has (it starts with `ses`, as OpenCode checks). */
export const NO_SESSION = "ses_0000000000000000000000nothere";
const OTHER_DIRECTORY = "/conformance/another-project";

type Call = Promise<{ data?: unknown; error?: unknown; response?: Response }>;

class Caller {
  readonly answers = new Map<string, Answer>();
  readonly client: OpencodeClient;
  readonly query: { directory: string };
  /** The session the exercise created. */
  session = "";

  constructor(readonly target: Target) {
    this.client = createOpencodeClient({ baseUrl: target.url, directory: target.directory });
    this.query = { directory: target.directory };
  }

  /** Answers are kept only while recording (not during the warm-up). */
  recording = true;

  async record(name: string, call: Call): Promise<Answer> {
    const result = await call;
    const answer = {
      status: result.response?.status ?? 0,
      contentType: result.response?.headers.get("content-type") ?? null,
      body: result.error ?? result.data ?? null,
    };
    if (this.recording) this.answers.set(name, answer);
    return answer;
  }
}

/** The session went idle in the current phase. */
async function idle(stream: EventRecorder, session: string): Promise<void> {
  const phase = stream.phase;
  await waitFor(`session ${session} idle in ${phase}`, () =>
    stream.of(phase, session).some((e) => e.type === "session.idle"),
  );
}

/**
 * A session created and prompted, until its first turn ended. Not recorded for the warm-up: whether its running turn
 * is seen depends on how soon the instance has loaded its providers.
 */
async function firstTurn(c: Caller, stream: EventRecorder, phase: string, recording: boolean): Promise<string> {
  const { client, query } = c;
  stream.phase = phase;
  c.recording = recording;
  const created = await c.record(
    `${phase}.create`,
    client.session.create({ query, body: { title: `conformance ${phase}` } }),
  );
  const id = (created.body as { id: string }).id;
  const body = { parts: [{ type: "text" as const, text: "Work through the list." }] };
  await c.record(`${phase}.prompt`, client.session.promptAsync({ path: { id }, query, body }));
  // While the turn runs: the status map names the session busy, its messages end with the unfinished answer.
  await c.record(`${phase}.status.busy`, client.session.status({ query }));
  await c.record(`${phase}.messages.running`, client.session.messages({ path: { id }, query }));
  await idle(stream, id);
  c.recording = true;
  return id;
}

/** Every read the enforcer's look makes, and the calls its countdown and its log make. */
async function reads(c: Caller, id: string, prefix: string): Promise<void> {
  const { client, query } = c;
  await c.record(`${prefix}.list`, client.session.list({ query }));
  await c.record(`${prefix}.status`, client.session.status({ query }));
  await c.record(`${prefix}.get`, client.session.get({ path: { id }, query }));
  await c.record(`${prefix}.children`, client.session.children({ path: { id }, query }));
  await c.record(`${prefix}.todo`, client.session.todo({ path: { id }, query }));
  await c.record(`${prefix}.messages`, client.session.messages({ path: { id }, query }));
  await c.record(`${prefix}.messages.limit`, client.session.messages({ path: { id }, query: { ...query, limit: 2 } }));
  await c.record(`${prefix}.agents`, client.app.agents({ query }));
}

async function prompt(c: Caller, stream: EventRecorder, id: string): Promise<void> {
  const { client, query } = c;
  stream.phase = "prompt";
  const body = {
    parts: [
      { type: "text", text: "[SYSTEM REMINDER - TODO CONTINUATION]\n\nContinue.", synthetic: true },
      { type: "text", text: "↻ todo-continuation: 0/3 done" },
    ],
    messageID: newMessageId(),
    agent: "build",
    model: { providerID: "scripted", modelID: "model-1" },
  };
  await c.record("prompt", client.session.promptAsync({ path: { id }, query, body: body as never }));
  await c.record("prompt.status.busy", client.session.status({ query }));
  await idle(stream, id);
  stream.phase = "after";
  await reads(c, id, "after");
}

/** The words of the provider's error the `limited` phase's turn fails on (the real model answers 400 with them). */
export const LIMITED_TEXT = "You have reached your usage limit. It resets in 20 seconds.";
/** What the `limited` phase's prompt says: the real model fails the turn it starts. */
export const LIMITED_PROMPT = "LIMITED: go on with the list.";

/** A prompt whose turn fails on a provider's limit: the error, both idles, and the messages after it. */
async function limited(c: Caller, stream: EventRecorder, id: string): Promise<void> {
  const { client, query } = c;
  stream.phase = "limited";
  const body = { parts: [{ type: "text" as const, text: LIMITED_PROMPT }] };
  await c.record("limited.prompt", client.session.promptAsync({ path: { id }, query, body }));
  // OpenCode goes idle twice for a failed turn: after the error, and after the message that keeps it.
  await waitFor(
    `session ${id} idle twice in limited`,
    () => stream.of("limited", id).filter((e) => e.type === "session.idle").length >= 2,
  );
  await c.record("limited.messages", client.session.messages({ path: { id }, query }));
}

/** What OpenCode refuses: unknown sessions, and bodies it does not accept (a toast's duration in fractions, say). */
async function refusals(c: Caller): Promise<void> {
  const { client, query } = c;
  const path = { id: NO_SESSION };
  await c.record("missing.get", client.session.get({ path, query }));
  await c.record("missing.todo", client.session.todo({ path, query }));
  await c.record("missing.messages", client.session.messages({ path, query }));
  await c.record("missing.children", client.session.children({ path, query }));
  const text = { parts: [{ type: "text" as const, text: "x" }] };
  await c.record("missing.prompt", client.session.promptAsync({ path, query, body: text }));
  const session = { id: c.session };
  await c.record("refused.prompt.no-parts", client.session.promptAsync({ path: session, query, body: {} as never }));
  await c.record(
    "refused.prompt.parts",
    client.session.promptAsync({ path: session, query, body: { parts: "x" } as never }),
  );
  const toast = { message: "m", variant: "info" as const, duration: 1.5 };
  await c.record("refused.toast.duration", client.tui.showToast({ query, body: toast }));
  await c.record(
    "refused.log.level",
    client.app.log({ query, body: { service: "x", level: "loud" as never, message: "m" } }),
  );
}

/** Requests for another directory's instance: its lists are empty, a session is still found by its id. */
async function elsewhere(c: Caller, id: string): Promise<void> {
  const { client } = c;
  const query = { directory: OTHER_DIRECTORY };
  await c.record("elsewhere.list", client.session.list({ query }));
  await c.record("elsewhere.status", client.session.status({ query }));
  await c.record("elsewhere.get", client.session.get({ path: { id }, query }));
}

/**
 * Runs the exercise on one server: a warm-up session (the instance's first turn loads its providers), then the
 * measured session's first turn, every read, the toast and the log, one prompt with our message id and a synthetic
 * part, the reads again, a prompt whose turn fails on a provider's limit, the refusals, another directory's answers,
 * and the first heartbeat.
 */
export async function exercise(target: Target): Promise<Exercise> {
  const c = new Caller(target);
  const stream = new EventRecorder();
  await stream.open(`${target.url}/event?directory=${encodeURIComponent(target.directory)}`);
  const warmUp = await firstTurn(c, stream, "warm-up", false);
  const session = (c.session = await firstTurn(c, stream, "first-turn", true));
  stream.phase = "reads";
  await reads(c, session, "reads");
  await c.record(
    "toast",
    c.client.tui.showToast({ query: c.query, body: { title: "t", message: "m", variant: "info", duration: 1000 } }),
  );
  await c.record(
    "log",
    c.client.app.log({
      query: c.query,
      body: { service: "todo-continuation", level: "info", message: "m", extra: { a: 1 } },
    }),
  );
  await prompt(c, stream, session);
  await limited(c, stream, session);
  stream.phase = "refusals";
  await refusals(c);
  await elsewhere(c, session);
  stream.phase = "heartbeat";
  await waitFor("a heartbeat", () => stream.events.some((e) => e.type === "server.heartbeat"), { timeoutMs: 15_000 });
  await stream.close();
  return { answers: c.answers, stream, session, warmUp };
}
