// Nothing that arrives in an event reaches SQL as code: hostile session ids and todo texts are stored verbatim and
// the tables stay whole. (Owner-only permissions: test/store; todo text quoting: test/core/prompt; credentials in the
// service's output: test/e2e/service.)
import { afterEach, describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { drained, startEngine, type EngineFixture } from "../../support/engine-fixture.js";

let f: EngineFixture;
afterEach(async () => {
  await f.destroy();
});

const HOSTILE = [
  "x'); DROP TABLE audit_events; --",
  'ses_1" OR 1=1 --',
  "ses_'; UPDATE sessions SET stopped_at = NULL; --",
  "ses_ünïcödé_🙂",
];

describe("hostile input never becomes SQL", () => {
  it("session ids and todo texts with SQL in them are stored verbatim, and every table survives", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.05, toast: false } });
    for (const id of HOSTILE) {
      f.host.addUserMessage(id, "go");
      f.host.setTodos(id, [["'); DELETE FROM countdowns; --", "pending"]]);
      f.enforcer.handleEvent(ev.idle(id));
      await f.enforcer.stop(id);
      await f.enforcer.resume(id);
      f.enforcer.handleEvent(ev.idle(id));
    }
    await drained(f);
    const tables = f.db
      .all<{ name: string }>(
        f.backend === "postgres"
          ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
          : "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      )
      .map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(["audit_events", "countdowns", "injections", "sessions"]));
    for (const id of HOSTILE) {
      expect(f.rows.session(id)?.session_id).toBe(id);
      expect(f.rows.trail(id)).toContain("stopped:api");
      expect(f.rows.injections(id)).toHaveLength(1);
    }
    expect(f.host.prompts.map((p) => p.sessionId).sort()).toEqual([...HOSTILE].sort());
    expect(f.host.prompts[0]!.text).toContain('"\'); DELETE FROM countdowns; --"');
  });

  it("an id with a NUL in it (no OpenCode session has one; PostgreSQL's text cannot hold it) is refused at the door", async () => {
    f = await startEngine({ config: { countdownSeconds: 0.05, toast: false } });
    const nul = "ses_\u0000nul";
    f.host.addUserMessage(nul, "go");
    f.host.setTodos(nul, [["a", "pending"]]);
    f.enforcer.handleEvent(ev.idle(nul));
    await expect(f.enforcer.stop(nul)).rejects.toThrow(/not a session id/);
    await drained(f);
    expect(f.host.prompts).toEqual([]);
    expect(f.db.all("SELECT session_id FROM sessions")).toEqual([]);
    expect(f.rows.audit()).toEqual([]);
  });
});
