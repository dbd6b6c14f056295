// After the last retry fails the session stays stopped across idles: OpenCode going idle again is no reason to try
// again; only a person (a message, a resume) or a continuation's turn seen starting is. A real engine on a real database.
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { ev } from "../../support/events.js";
import type { Behaviour } from "../../support/fake-host.js";
import { startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";

const S = "ses_gave_up";
let f: EngineFixture;

async function boot(config: Partial<Config> = {}, folder?: string) {
  f = await startEngine({
    ...(folder ? { folder } : {}),
    config: { maxRetries: 3, retryBaseMs: 1000, retryMaxMs: 8000, ...config },
  });
  f.host.addUserMessage(S, "build the thing");
  f.host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
}

const settle = () => settleEngine(f);

const failures = () =>
  f.rows
    .audit(S)
    .filter((r) => r.event === "injection_failed")
    .map((r) => `${r.reason}:${String(r.detail.attempt)}`);

/** OpenCode going idle every 15 s for `ms`, as it does while a session sits there. */
async function idleEvery15s(ms: number) {
  for (let t = 0; t < ms; t += 15_000) {
    f.enforcer.handleEvent(ev.idle(S));
    await advance(15_000);
    await settle();
  }
}

useFakeTime(() => f);

describe("failed attempts are bounded across idles", () => {
  it.each<[string, Behaviour]>([
    ["never reached OpenCode (it threw before taking it)", "fail"],
    ["refused at the connection", "refused"],
  ])(
    "a prompt that always fails (%s): maxRetries 3 → 4 calls in 2 minutes of idles, then skipped: gave_up",
    async (_, how) => {
      await boot();
      f.host.promptDefault = how;
      await idleEvery15s(120_000);
      expect(failures()).toEqual(["retrying:1", "retrying:2", "retrying:3", "gave_up:4"]);
      expect(f.host.calls.prompt).toBe(4);
      const skips = f.rows.audit(S).filter((r) => r.event === "skipped");
      expect(skips.length).toBeGreaterThanOrEqual(5);
      expect(skips.at(-1)).toMatchObject({ reason: "gave_up", detail: { failures: 4, limit: 3 } });
      // Told once, when it gave up; the idles after it say nothing more.
      expect(f.host.toasts.filter((t) => /sending failed/i.test(t.message))).toHaveLength(1);
    },
  );

  it("holds across a restart; a real user message starts the count over", async () => {
    await boot();
    f.host.promptDefault = "fail";
    await idleEvery15s(60_000);
    expect(f.host.calls.prompt).toBe(4);
    const { folder, host } = f;
    await f.close();
    f = await startEngine({ folder, host, config: { maxRetries: 3, retryBaseMs: 1000, retryMaxMs: 8000 } });
    await idleEvery15s(30_000);
    expect(host.calls.prompt).toBe(4);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "gave_up" });

    const message = ev.userMessage(S);
    f.enforcer.handleEvent(message);
    f.enforcer.handleEvent(ev.textPart(S, message.properties.info.id, "try again please"));
    host.addUserMessage(S, "try again please", { id: message.properties.info.id });
    host.promptDefault = "ok";
    await idleEvery15s(15_000);
    expect(host.calls.prompt).toBe(5);
    expect(f.rows.trail(S)).toContain("injected");
  });
});
