// EngineEmitter promises: emit() hands the payload to every listener of that event (and of no other), in the order they
// subscribed; on() returns the function that unsubscribes that one listener; a listener that throws is ignored and the
// others still run, so reporting never breaks the engine or its host. logEngineEvents promises one line in OpenCode's
// log per `error` (level error, "<operation> failed", the error's message), per `store_paused` (level error, the
// message, the problem) and per `store_resumed` (level info, the database's location, the pause in whole seconds, the
// failed writes and the problem), and nothing for the other events.
import { describe, expect, it } from "vitest";
import { EngineEmitter, logEngineEvents, type Armed } from "../../src/engine/engine-events.js";
import type { LogLevel } from "../../src/host/port.js";

type Line = { level: LogLevel; message: string; extra?: Record<string, unknown> };

function logged(location = "/data/state.db") {
  const events = new EngineEmitter();
  const lines: Line[] = [];
  logEngineEvents(events, (level, message, extra) => void lines.push({ level, message, extra }), location);
  return { events, lines };
}

describe("EngineEmitter", () => {
  it("hands the payload itself to each listener of the event, in the order they subscribed", () => {
    const events = new EngineEmitter();
    const seen: string[] = [];
    const payload = { sessionId: "ses_a" };
    events.on("look_again", (p) => {
      expect(p).toBe(payload);
      seen.push("first");
    });
    events.on("look_again", (p) => void seen.push(`second:${p.sessionId}`));
    events.emit("look_again", payload);
    expect(seen).toEqual(["first", "second:ses_a"]);
  });

  it("reaches only the listeners of the event emitted", () => {
    const events = new EngineEmitter();
    const seen: string[] = [];
    events.on("error", ({ operation }) => void seen.push(`error:${operation}`));
    events.on("failure", ({ operation }) => void seen.push(`failure:${operation}`));
    events.emit("failure", { operation: "a", error: new Error("x") });
    expect(seen).toEqual(["failure:a"]);
  });

  it("an event nobody listens to is fine", () => {
    const events = new EngineEmitter();
    expect(() => events.emit("countdown_armed", { armed: {} as Armed })).not.toThrow();
  });

  it("the function on() returns unsubscribes that listener only, and calling it twice changes nothing more", () => {
    const events = new EngineEmitter();
    const seen: string[] = [];
    const offA = events.on("look_again", () => void seen.push("a"));
    events.on("look_again", () => void seen.push("b"));
    events.emit("look_again", { sessionId: "s" });
    offA();
    offA();
    events.emit("look_again", { sessionId: "s" });
    expect(seen).toEqual(["a", "b", "b"]);
  });

  it("the same function subscribed to two events is unsubscribed from the one whose on() it came from", () => {
    const events = new EngineEmitter();
    const seen: string[] = [];
    const listener = ({ operation }: { operation: string }) => void seen.push(operation);
    const offError = events.on("error", listener);
    events.on("failure", listener);
    offError();
    events.emit("error", { operation: "error", error: null });
    events.emit("failure", { operation: "failure", error: null });
    expect(seen).toEqual(["failure"]);
  });

  it("a listener that throws is ignored: emit() does not throw, and the listeners after it still run", () => {
    const events = new EngineEmitter();
    const seen: string[] = [];
    events.on("look_again", () => void seen.push("before"));
    events.on("look_again", () => {
      throw new Error("listener bug");
    });
    events.on("look_again", () => {
      throw "not even an Error";
    });
    events.on("look_again", () => void seen.push("after"));
    expect(() => events.emit("look_again", { sessionId: "s" })).not.toThrow();
    expect(seen).toEqual(["before", "after"]);
    // And it stays subscribed: the next emit calls it (and ignores it) again.
    events.emit("look_again", { sessionId: "s" });
    expect(seen).toEqual(["before", "after", "before", "after"]);
  });

  it("a listener that unsubscribes itself while the event is emitted does not stop the others", () => {
    const events = new EngineEmitter();
    const seen: string[] = [];
    const off = events.on("look_again", () => {
      seen.push("once");
      off();
    });
    events.on("look_again", () => void seen.push("always"));
    events.emit("look_again", { sessionId: "s" });
    events.emit("look_again", { sessionId: "s" });
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
    events.emit("failure", { operation: "x", error: new Error("reported, not logged here") });
    events.emit("look_again", { sessionId: "s" });
    events.emit("countdown_armed", { armed: {} as Armed });
    events.emit("countdown_due", { armed: {} as Armed, info: { lateMs: 0, resumed: null } });
    expect(lines).toEqual([]);
    events.emit("error", { operation: "y", error: new Error("e") });
    expect(lines).toHaveLength(1);
  });

  it("a log that throws is ignored like any listener: the engine's emit still returns", () => {
    const events = new EngineEmitter();
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
  });
});
