// One session on a real engine (a real database, a scripted host, fake timers): a user asked for something with an
// agent and a model, and the suites that import this go on from there. `f` is a live binding: `boot()` and
// `restart()` start an engine, so a test file imports it once and reads it as its own.
import type { Config } from "../../../src/config/resolve.js";
import { ev } from "../../support/events.js";
import { startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";

export const S = "ses_main";
export let f: EngineFixture;

/** Fake time for every test of the file; the engine of each test destroyed after it. */
export function useOneSession(): void {
  useFakeTime(() => f);
}

export async function boot(config: Partial<Config> = {}) {
  f = await startEngine({ config: { retryBaseMs: 1000, retryMaxMs: 4000, ...config } });
  f.host.addUserMessage(S, "build the thing", {
    agent: "build",
    providerId: "scripted",
    modelId: "model-1",
    variant: "high",
  });
}

/** The engine closed and another started on the same database and host, as after a restart of OpenCode. */
export async function restart(config: Partial<Config> = {}) {
  const { folder, host } = f;
  await f.close();
  f = await startEngine({ folder, host, config });
}

export async function idle(sessionId = S) {
  f.enforcer.handleEvent(ev.idle(sessionId));
  await advance(5);
}

/** A real user message as OpenCode publishes it: the message, then its text part. */
export function userSays(sessionId = S, text = "please also do X") {
  const message = ev.userMessage(sessionId);
  f.enforcer.handleEvent(message);
  f.enforcer.handleEvent(ev.textPart(sessionId, message.properties.info.id, text));
  f.host.addUserMessage(sessionId, text);
}

export const settle = () => settleEngine(f);
