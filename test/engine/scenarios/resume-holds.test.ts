// Resume lifts every hold a toast or the panel tells the user to resume from, and says which: a provider's refusal
// (the stop toast says "fix it, then /resume-continuation"), attempts given up, a stop, a pause. A real engine on a
// real database; a resume from the API (this process) or from another process (the CLI, the TUI's palette).
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { resume } from "../../../src/store/changes/resume.js";
import { openStore } from "../../../src/store/open/open.js";
import { ev } from "../../support/events.js";
import { DIRECTORY, startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";

const S = "ses_resume_holds";
let f: EngineFixture;

async function boot(config: Partial<Config> = {}) {
  f = await startEngine({ config: { maxRetries: 1, retryBaseMs: 1000, retryMaxMs: 8000, ...config } });
  f.host.addUserMessage(S, "build the thing");
  f.host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
}

const settle = () => settleEngine(f);

async function idleAndWait(ms = 2500) {
  f.enforcer.handleEvent(ev.idle(S));
  await advance(ms);
  await settle();
}

/** The last turn failed with a 401: OpenCode's `session.error` and the errored assistant message. */
function refusedWith401() {
  const message = "Unauthorized: invalid api key";
  f.enforcer.handleEvent({
    type: "session.error",
    properties: {
      sessionID: S,
      error: { name: "APIError", data: { message, statusCode: 401, isRetryable: false } },
    },
  });
  f.host.addAssistantMessage(S, { error: { name: "APIError", statusCode: 401, isRetryable: false, message } });
}

/** The resume of another process (the CLI, the TUI's palette): the same change, through its own connection. */
async function resumeElsewhere(source: "cli" | "tui") {
  const other = await openStore(f.dbPath);
  try {
    return await other.change(resume({ sessionId: S, directory: DIRECTORY }, source, Date.now()));
  } finally {
    await other.close();
  }
}

const unstopped = () => f.rows.audit(S).filter((r) => r.event === "unstopped");

useFakeTime(() => f);

describe("resume lifts what the user is told to resume from", () => {
  it("a provider's refusal (401), from the API: it says so, and the next idle continues", async () => {
    await boot();
    refusedWith401();
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "provider_error" });
    expect(await f.enforcer.resume(S, "api")).toBe(true);
    await advance(2500);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(unstopped()).toMatchObject([{ reason: "api", detail: { lifted: ["provider_error"] } }]);
    // A newer refusal after the resume holds again.
    refusedWith401();
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "provider_error" });
  });

  it.each(["cli", "tui"] as const)(
    "a provider's refusal (401), from another process (%s): the running enforcer looks again and continues",
    async (source) => {
      await boot({ leaseMs: 3000 });
      refusedWith401();
      await idleAndWait();
      expect(await resumeElsewhere(source)).toEqual({ lifted: ["provider_error"], changed: true });
      await advance(1100);
      await settle();
      await advance(2500);
      await settle();
      expect(f.host.prompts).toHaveLength(1);
    },
  );

  it("attempts given up: lifted, named, and the count starts over", async () => {
    await boot();
    f.host.promptDefault = "fail";
    await idleAndWait(5000);
    await idleAndWait(5000);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "gave_up" });
    f.host.promptDefault = "ok";
    expect(await f.enforcer.resume(S, "api")).toBe(true);
    await advance(2500);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    expect(unstopped()).toMatchObject([{ detail: { lifted: ["gave_up"] } }]);
    expect(f.rows.session(S)).toMatchObject({ consecutive_failures: 0 });
  });

  it("a stop is named; nothing to lift is no change", async () => {
    await boot();
    expect(await f.enforcer.resume(S, "api")).toBe(false);
    await f.enforcer.stop(S, "api");
    expect(await resumeElsewhere("cli")).toEqual({ lifted: ["stopped"], changed: true });
    expect(await resumeElsewhere("cli")).toEqual({ lifted: [], changed: false });
  });
});
