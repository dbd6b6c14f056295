// The events a simulated session publishes, in the order OpenCode 1.18.33 publishes them for a scripted model's turn
// that writes todos (measured: test/e2e/sim-opencode.test.ts compares them with a real server's). `full` publishes
// every one of them, streamed text deltas and repeated updates included; `lean` only those the enforcer reacts to, in
// the same order, for a benchmark that wants the service's work without OpenCode's chatter.
import {
  apiError,
  assistantInfo,
  CLOSING_TEXT,
  failedAssistantInfo,
  sessionInfo,
  stepFinish,
  stepStart,
  textPart,
  todoItems,
  toolPart,
  userInfo,
  userPart,
  type SessionFacts,
  type Turn,
  type UserMessage,
} from "./payloads.js";

export type EventDetail = "full" | "lean";

/** Where a server's events go: its open event streams. */
export interface EventSink {
  /** Whether anyone listens (nothing is rendered otherwise). */
  readonly listening: boolean;
  emit(type: string, properties: Record<string, unknown>): void;
}

/** What the events of one session are made from. */
export interface TurnScene {
  readonly sink: EventSink;
  readonly detail: EventDetail;
  readonly facts: SessionFacts;
  readonly todos: number;
}

/** The message parts' `time`: when OpenCode published the part. */
function partEvent(scene: TurnScene, part: Record<string, unknown>, at: number): void {
  scene.sink.emit("message.part.updated", { sessionID: scene.facts.id, part, time: at });
}

function status(scene: TurnScene, type: "busy" | "idle"): void {
  scene.sink.emit("session.status", { sessionID: scene.facts.id, status: { type } });
}

function sessionUpdated(scene: TurnScene, diff: boolean): void {
  const sessionID = scene.facts.id;
  scene.sink.emit("session.updated", { sessionID, info: sessionInfo(scene.facts) });
  if (diff) scene.sink.emit("session.diff", { sessionID, diff: [] });
}

function assistant(scene: TurnScene, turn: Turn, which: 0 | 1, done: boolean, times = 1): void {
  const info = assistantInfo(scene.facts.id, turn, which, scene.facts.directory, done);
  for (let i = 0; i < times; i++) scene.sink.emit("message.updated", { sessionID: scene.facts.id, info });
}

/**
 * A prompt stored: the session's agent and model recorded (its first prompt), the user message, its parts, and (when
 * it starts a turn) the session busy.
 */
export function promptEvents(scene: TurnScene, message: UserMessage, startsTurn: boolean, first: boolean): void {
  if (!scene.sink.listening) return;
  const sessionID = scene.facts.id;
  if (first && scene.detail === "full") sessionUpdated(scene, false);
  scene.sink.emit("message.updated", { sessionID, info: userInfo(sessionID, message) });
  for (let i = 0; i < message.parts.length; i++) partEvent(scene, userPart(sessionID, message, i), message.created);
  if (scene.detail === "full") sessionUpdated(scene, false);
  if (startsTurn) status(scene, "busy");
}

/** A turn begins: its first assistant message is created (the model is being called). */
export function turnStartEvents(scene: TurnScene, turn: Turn): void {
  if (!scene.sink.listening) return;
  assistant(scene, turn, 0, false);
  if (scene.detail === "lean") return;
  status(scene, "busy");
  sessionUpdated(scene, true);
}

/** The first step: the todowrite call, the todos it wrote, the step's bill. */
function firstStep(scene: TurnScene, turn: Turn, at: number): void {
  const sessionID = scene.facts.id;
  const full = scene.detail === "full";
  if (full) partEvent(scene, stepStart(sessionID, turn, 0), at);
  if (full) partEvent(scene, toolPart(sessionID, turn, scene.todos, "pending"), at);
  scene.sink.emit("todo.updated", { sessionID, todos: todoItems(turn.completedAfter, scene.todos) });
  if (full) partEvent(scene, toolPart(sessionID, turn, scene.todos, "running"), at);
  partEvent(scene, toolPart(sessionID, turn, scene.todos, "completed"), at);
  partEvent(scene, stepFinish(sessionID, turn, 0), at);
  assistant(scene, turn, 0, true, full ? 2 : 1);
}

/** The second step: the closing text streamed in three chunks, the step's bill. */
function secondStep(scene: TurnScene, turn: Turn, at: number): void {
  const sessionID = scene.facts.id;
  if (scene.detail === "lean") {
    partEvent(scene, stepFinish(sessionID, turn, 1), at);
    return assistant(scene, turn, 1, true);
  }
  status(scene, "busy");
  assistant(scene, turn, 1, false);
  status(scene, "busy");
  sessionUpdated(scene, true);
  partEvent(scene, stepStart(sessionID, turn, 1), at);
  const text = textPart(sessionID, turn, false);
  partEvent(scene, text, at);
  for (const delta of CLOSING_TEXT.match(/.{1,12}/g)!)
    scene.sink.emit("message.part.delta", {
      sessionID,
      messageID: text.messageID,
      partID: text.id,
      field: "text",
      delta,
    });
  partEvent(scene, textPart(sessionID, turn, true), at);
  partEvent(scene, stepFinish(sessionID, turn, 1), at);
  assistant(scene, turn, 1, true, 2);
  status(scene, "busy");
}

/** A turn ended: both steps; then, unless another prompt waits, the session idle. */
export function turnEndEvents(scene: TurnScene, turn: Turn, goesIdle: boolean): void {
  if (!scene.sink.listening) return;
  firstStep(scene, turn, turn.ended);
  secondStep(scene, turn, turn.ended);
  if (!goesIdle) return;
  status(scene, "idle");
  scene.sink.emit("session.idle", { sessionID: scene.facts.id });
  if (scene.detail === "full") sessionUpdated(scene, true);
}

/**
 * A turn failed on a provider's error, as OpenCode 1.18.33 ends one (measured: a 400 from the model): the error, the
 * session idle, then the assistant message with the error, and the session idle again (two `session.idle`).
 */
export function failedTurnEndEvents(scene: TurnScene, turn: Turn, goesIdle: boolean): void {
  if (!scene.sink.listening || !turn.failed) return;
  const sessionID = scene.facts.id;
  scene.sink.emit("session.error", { sessionID, error: apiError(turn.failed) });
  const idle = () => {
    if (!goesIdle) return;
    status(scene, "idle");
    scene.sink.emit("session.idle", { sessionID });
  };
  if (scene.detail === "full") idle();
  const info = failedAssistantInfo(sessionID, turn, scene.facts.directory, turn.failed);
  scene.sink.emit("message.updated", { sessionID, info });
  idle();
}

/** A session made through `POST /session`. */
export function createdEvents(scene: TurnScene): void {
  if (!scene.sink.listening) return;
  scene.sink.emit("session.created", { sessionID: scene.facts.id, info: sessionInfo(scene.facts) });
}
