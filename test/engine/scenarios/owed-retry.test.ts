// The look a failed todo read owes is a look at the idle it failed on, however late it comes: a continuation fired
// since that idle (by any process) answered it, and the owed look yields to it.
import { describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { advance, useFakeTime } from "../../support/fake-time.js";
import { hostWithOpenTodos, type FakeHost } from "../../support/fake-host.js";
import { gateChanges } from "../../support/store-spies.js";
import { startEngine, tempFolder, type EngineFixture } from "../../support/engine-fixture.js";

const S = "ses_owed";
const fixtures: EngineFixture[] = [];

async function engine(folder: string, host: FakeHost) {
  const config = { countdownSeconds: 10, resumeWindowSeconds: 60, retryBaseMs: 15_000 };
  const f = await startEngine({ folder, host, config });
  fixtures.push(f);
  return f;
}

const newHost = () => hostWithOpenTodos(S);

useFakeTime(() => fixtures.splice(0));

describe("the retry owed after a failed todo read", () => {
  it("yields to a continuation fired since its idle, when its skip was written after that continuation", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    const hostB = newHost();
    // A's continuation sets the session going; B cannot tell (its status reads fail) and never hears of it.
    hostA.autoReply = false;
    hostA.onAccepted = () => void (hostA.statuses[S] = "busy");
    hostB.statusBehaviour = "fail";
    hostB.todoBehaviour = "fail";
    const a = await engine(folder, hostA);
    const b = await engine(folder, hostB);
    a.enforcer.handleEvent(ev.idle(S)); // A arms; its countdown ends at 10 s
    await advance(1000);
    // B's read fails at 1 s, before A's continuation (10 s); writing its skip, and the retry it owes at 16 s, is slow.
    const slowSkip = gateChanges(b.port, "skip", "before");
    b.enforcer.handleEvent(ev.idle(S));
    await advance(9500);
    expect(hostA.prompts).toHaveLength(1);
    hostB.todoBehaviour = "ok"; // the retry would read the todos
    slowSkip.open();
    await advance(60_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostA.prompts.length + hostB.prompts.length).toBe(1);
    const injectionId = a.rows.audit(S).find((r) => r.event === "fired")?.detail.injectionId;
    expect(a.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "in_flight",
      detail: { answeredBy: injectionId, trigger: "recheck" },
    });
    expect(a.rows.session(S)).toMatchObject({ recheck_at: null });
  });
});
