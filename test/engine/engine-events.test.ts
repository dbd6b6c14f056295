// EngineEmitter promises: emit() hands the payload to every listener of that event (and of no other), in the order they
// subscribed; on() returns the function that unsubscribes that one listener; a listener that throws is reported to the
// emitter's owner (never swallowed) and the others still run, so reporting never breaks the engine or its host. logEngineEvents promises one line in OpenCode's
// log per `error` (level error, "<operation> failed", the error's message), per `store_paused` (level error, the
// message, the problem) and per `store_resumed` (level info, the database's location, the pause in whole seconds, the
// failed writes and the problem), and nothing for the other events.
import { describe, expect, it } from "vitest";
import { EngineEmitter, logEngineEvents, type EngineEventName } from "../../src/engine/engine-events.js";
import type { LogLevel } from "../../src/host/port.js";

type Line = { level: LogLevel; message: string; extra?: Record<string, unknown> };

/** An emitter whose listeners' throws are kept for the test to look at. */
function emitter() {
  const thrown: Array<{ event: EngineEventName; error: unknown }> = [];
  const events = new EngineEmitter((event, error) => void thrown.push({ event, error }));
  return Object.assign(events, { thrown });
}

function logged(location = "/data/state.db") {
  const events = emitter();
  const lines: Line[] = [];
  logEngineEvents(events, (level, message, extra) => void lines.push({ level, message, extra }), location);
  return { events, lines };
}

describe("EngineEmitter", () => {
  it("hands the payload itself to each listener of the event, in the order they subscribed", () => {
    const events = emitter();
    const seen: string[] = [];
    const payload = { sessionId: "ses_a" };
    events.on("session_idle", (p) => {
      expect(p).toBe(payload);
      seen.push("first");
    });
    events.on("session_idle", (p) => void seen.push(`second:${p.sessionId}`));
    events.emit("session_idle", payload);
    expect(seen).toEqual(["first", "second:ses_a"]);
  });

  it("reaches only the listeners of the event emitted", () => {
    const events = emitter();
    const seen: string[] = [];
    events.on("error", ({ operation }) => void seen.push(`error:${operation}`));
    events.on("store_paused", ({ message }) => void seen.push(`paused:${message}`));
    events.emit("store_paused", { problem: "locked", message: "a" });
    expect(seen).toEqual(["paused:a"]);
  });

  it("an event nobody listens to is fine", () => {
    const events = emitter();
    expect(() => events.emit("store_resumed", { problem: "locked", pausedForMs: 1, failedWrites: 0 })).not.toThrow();
    expect(events.thrown).toEqual([]);
  });

  it("the function on() returns unsubscribes that listener only, and calling it twice changes nothing more", () => {
    const events = emitter();
    const seen: string[] = [];
    const offA = events.on("session_idle", () => void seen.push("a"));
    events.on("session_idle", () => void seen.push("b"));
    events.emit("session_idle", { sessionId: "s" });
    offA();
    offA();
    events.emit("session_idle", { sessionId: "s" });
    expect(seen).toEqual(["a", "b", "b"]);
  });

  it("the same function subscribed to two events is unsubscribed from the one whose on() it came from", () => {
    const events = emitter();
    const seen: string[] = [];
    const listener = (payload: object) => void seen.push(Object.keys(payload)[0]!);
    const offError = events.on("error", listener);
    events.on("store_paused", listener);
    offError();
    events.emit("error", { operation: "error", error: null });
    events.emit("store_paused", { problem: "locked", message: "m" });
    expect(seen).toEqual(["problem"]);
  });

  it("a listener that throws is reported, each throw once: emit() does not throw, and the listeners after it still run", () => {
    const events = emitter();
    const seen: string[] = [];
    events.on("session_idle", () => void seen.push("before"));
    events.on("session_idle", () => {
      throw new Error("listener bug");
    });
    events.on("session_idle", () => {
      throw "not even an Error";
    });
    events.on("session_idle", () => void seen.push("after"));
    expect(() => events.emit("session_idle", { sessionId: "s" })).not.toThrow();
    expect(seen).toEqual(["before", "after"]);
    expect(events.thrown).toEqual([
      { event: "session_idle", error: new Error("listener bug") },
      { event: "session_idle", error: "not even an Error" },
    ]);
    // And it stays subscribed: the next emit calls it (and reports it) again.
    events.emit("session_idle", { sessionId: "s" });
    expect(seen).toEqual(["before", "after", "before", "after"]);
    expect(events.thrown).toHaveLength(4);
  });

  it("a report of a throw that itself throws goes no further: emit() still returns", () => {
    const events = new EngineEmitter(() => {
      throw new Error("the report failed too");
    });
    const seen: string[] = [];
    events.on("session_idle", () => {
      throw new Error("listener bug");
    });
    events.on("session_idle", () => void seen.push("after"));
    expect(() => events.emit("session_idle", { sessionId: "s" })).not.toThrow();
    expect(seen).toEqual(["after"]);
  });

  it("a listener that unsubscribes itself while the event is emitted does not stop the others", () => {
    const events = emitter();
    const seen: string[] = [];
    const off = events.on("session_idle", () => {
      seen.push("once");
      off();
    });
    events.on("session_idle", () => void seen.push("always"));
    events.emit("session_idle", { sessionId: "s" });
    events.emit("session_idle", { sessionId: "s" });
    expect(seen).toEqual(["once", "always", "always"]);
  });
});

describe("logEngineEvents", () => {
  it("an `error` is one error line: what failed, and the error's message", () => {
    const { events, lines } = logged();
    events.emit("error", { operation: "event handling", error: new Error("boom") });
    expect(lines).toEqual([{ level: "error", message: "event handling failed", extra: { error: "boom" } }]);
  });

  it("an `error` that is no Error is logged in words too", () => {
    const { events, lines } = logged();
    events.emit("error", { operation: "timer x", error: "plain text" });
    events.emit("error", { operation: "lane", error: { code: 7 } });
    expect(lines).toEqual([
      { level: "error", message: "timer x failed", extra: { error: "plain text" } },
      { level: "error", message: "lane failed", extra: { error: '{"code":7}' } },
    ]);
  });

  it("`store_paused` is one error line with the message and the kind of problem", () => {
    const { events, lines } = logged();
    events.emit("store_paused", { problem: "locked", message: "todo-continuation paused: the database is locked" });
    expect(lines).toEqual([
      { level: "error", message: "todo-continuation paused: the database is locked", extra: { kind: "locked" } },
    ]);
  });

  it("`store_resumed` is one info line: the location, the pause in whole seconds, the failed writes, the problem", () => {
    const { events, lines } = logged("/home/me/.local/state/tc.db");
    events.emit("store_resumed", { problem: "locked", pausedForMs: 12_499, failedWrites: 3 });
    events.emit("store_resumed", { problem: "gone", pausedForMs: 1_500, failedWrites: 0 });
    expect(lines).toEqual([
      {
        level: "info",
        message:
          "todo-continuation resumed: the database /home/me/.local/state/tc.db works again after 12 s (3 failed write(s) while locked).",
        extra: undefined,
      },
      {
        level: "info",
        message:
          "todo-continuation resumed: the database /home/me/.local/state/tc.db works again after 2 s (0 failed write(s) while gone).",
        extra: undefined,
      },
    ]);
  });

  it("logs nothing for the other events, and exactly one line per event logged", () => {
    const { events, lines } = logged();
    events.emit("session_idle", { sessionId: "s" });
    expect(lines).toEqual([]);
    events.emit("error", { operation: "y", error: new Error("e") });
    expect(lines).toHaveLength(1);
  });

  it("a log that throws is reported like any listener: the engine's emit still returns", () => {
    const events = emitter();
    logEngineEvents(
      events,
      () => {
        throw new Error("log down");
      },
      "/x",
    );
    const after: string[] = [];
    events.on("error", ({ operation }) => void after.push(operation));
    expect(() => events.emit("error", { operation: "z", error: new Error("e") })).not.toThrow();
    expect(after).toEqual(["z"]);
    expect(events.thrown).toEqual([{ event: "error", error: new Error("log down") }]);
  });
});
