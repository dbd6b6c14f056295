// What an engine finds armed or owed when it starts: a process restarting drops a countdown too late to fire, and a
// look owed too long ago (its person left it long ago), while a fleet replica's follower of a server just taken over
// looks at that session afresh (the lateness was the fleet's: a replica died, starved, or handed the server on). A
// real engine on the run's database.
import { afterEach, describe, expect, it } from "vitest";
import { arm } from "../../../src/store/changes/arm.js";
import { oweLook } from "../../../src/store/changes/look-owed.js";
import { releaseLeases } from "../../../src/store/changes/release-leases.js";
import { newOwnerId } from "../../../src/store/owner.js";
import { startEngine, DIRECTORY, type EngineFixture } from "../../support/engine-fixture.js";
import { waitFor } from "../../support/wait-for.js";

const S = "ses_handed_on";
const running: EngineFixture[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((f) => f.destroy()));
});

/** An engine (not started) whose database holds a countdown handed back (no owner) past the resume window. */
async function withStaleCountdown(owner?: string) {
  const f = await startEngine({ start: false, owner });
  running.push(f);
  const windowMs = f.config.resumeWindowSeconds * 1000;
  const now = Date.now();
  const countdown = {
    id: "cd_handed_on",
    sessionId: S,
    directory: DIRECTORY,
    armedAt: now - windowMs - 3000,
    deadlineAt: now - windowMs - 1000,
    leaseUntil: now + 60_000,
    owner: "vm/1/handed-on",
    attempt: 0,
    todosOpen: 1,
    todosTotal: 1,
  };
  await f.port.change(arm(countdown, {}));
  // Handed back by the replica that let the server go: nobody's now.
  await f.port.change(releaseLeases(countdown.owner, { directory: DIRECTORY }));
  return { f, countdown };
}

describe("an engine starting", () => {
  it("as a fleet replica's follower, owes a look to a session whose countdown came too late to fire", async () => {
    const { f, countdown } = await withStaleCountdown(newOwnerId());
    expect(await f.enforcer.start()).toMatchObject({ expired: 1 });
    const row = await waitFor("the look owed", () => {
      const session = f.rows.session(S);
      return session?.recheck_at != null ? session : undefined;
    });
    expect(row).toMatchObject({ owed_since: countdown.armedAt });
    expect(f.rows.countdowns(S)).toMatchObject([{ id: countdown.id, state: "expired" }]);
  });

  it("after a restart, drops it: nothing owed", async () => {
    const { f, countdown } = await withStaleCountdown();
    expect(await f.enforcer.start()).toMatchObject({ expired: 1 });
    await f.quiet();
    expect(f.rows.countdowns(S)).toMatchObject([{ id: countdown.id, state: "expired" }]);
    expect(f.rows.session(S)?.recheck_at ?? null).toBeNull();
  });

  it("as a fleet replica's follower, makes a look owed beyond the resume window; after a restart, expires it", async () => {
    for (const owner of [newOwnerId(), undefined]) {
      const f = await startEngine({ start: false, owner });
      running.push(f);
      f.host.setTodos(S, [["a", "pending"]]);
      const now = Date.now();
      const late = now - f.config.resumeWindowSeconds * 1000 - 20_000;
      await f.port.change(oweLook({ sessionId: S, directory: DIRECTORY }, now, { owe: late }));
      await f.enforcer.start();
      const trail = await waitFor("the owed look judged", () => {
        const t = f.rows.trail(S);
        return t.length > 0 && t;
      });
      expect(trail).toEqual(owner ? ["armed"] : ["expired:stale_after_restart"]);
    }
  });
});
