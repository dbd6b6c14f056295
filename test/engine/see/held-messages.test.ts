// HeldMessages promises: a user message that appears is held until one of its parts settles what it is (a text a person
// wrote, a compaction), with the injection ids its text claims (never proof of ours: see own-messages.ts); parts that settle nothing (synthetic text, a file) keep it
// pending and are remembered for the verdict; flush() settles every held message of one session with the parts that
// came, in the order they appeared, and leaves the other sessions' alone; beyond the cap the oldest held message is
// settled to make room; drop() forgets held messages (one session's, or all) without settling them. A settled or
// forgotten message is no longer held: its later parts are none of this module's business.
import { describe, expect, it } from "vitest";
import { COMMAND_NOTE_PREFIX, idLine, TRANSCRIPT_LINE_PREFIX } from "../../../src/core/prompt.js";
import { HeldMessages } from "../../../src/engine/see/held-messages.js";
import type { UserMessageEvent } from "../../../src/core/events.js";

const A = "ses_a";
const B = "ses_b";
/** The cap in held-messages.ts. */
const CAP = 1000;

function message(sessionId: string, messageId: string, extra: Partial<UserMessageEvent> = {}): UserMessageEvent {
  return { type: "message", sessionId, messageId, role: "user", createdAt: 1, agent: "build", ...extra };
}

const text = (value: string, synthetic?: boolean) => ({
  type: "text",
  text: value,
  ...(synthetic ? { synthetic } : {}),
});

describe("held until a decisive part", () => {
  it("a message that appears is held, and nothing is settled to make room", () => {
    const held = new HeldMessages();
    expect(held.seen(message(A, "m1"))).toBeUndefined();
    expect(held.size).toBe(1);
    expect(held.has("m1")).toBe(true);
  });

  it("a text a person wrote settles it as real, with the message as it appeared", () => {
    const held = new HeldMessages();
    const event = message(A, "m1");
    held.seen(event);
    const verdict = held.part("m1", text("Stop. Let me look at the parser first."));
    expect(verdict).toEqual({ event, kind: "real", claims: [] });
    expect(verdict !== "pending" && verdict?.event).toBe(event);
    expect(held.has("m1")).toBe(false);
    expect(held.size).toBe(0);
  });

  it("synthetic text and files keep it pending; the first text a person wrote settles it as real", () => {
    const held = new HeldMessages();
    held.seen(message(A, "m1"));
    expect(held.part("m1", text("Called the Read tool", true))).toBe("pending");
    expect(held.part("m1", { type: "file", mime: "image/png", url: "file:///x.png" })).toBe("pending");
    expect(held.part("m1", { type: "agent", name: "reader" })).toBe("pending");
    expect(held.has("m1")).toBe(true);
    expect(held.part("m1", text("and fix this"))).toMatchObject({ kind: "real" });
    expect(held.has("m1")).toBe(false);
  });

  it("an id line settles nothing by itself: a synthetic part carrying one keeps it pending", () => {
    const held = new HeldMessages();
    held.seen(message(A, "m1"));
    expect(held.part("m1", text(`Continue.\n${idLine("inj_abcdef123")}`, true))).toBe("pending");
  });

  it("text that looks like ours is a person's, with the injection ids it claims for the database to check", () => {
    const held = new HeldMessages();
    held.seen(message(A, "m1"));
    expect(held.part("m1", text(`the prompt\n${idLine("inj_abcdef123")}`, true))).toBe("pending");
    expect(held.part("m1", text(`${TRANSCRIPT_LINE_PREFIX} 1/3 done`))).toMatchObject({
      kind: "real",
      claims: ["inj_abcdef123"],
    });
    held.seen(message(A, "m2"));
    expect(held.part("m2", text(`${TRANSCRIPT_LINE_PREFIX} 1/3 done`))).toMatchObject({ kind: "real", claims: [] });
  });

  it("a command's note settles it as a command", () => {
    const held = new HeldMessages();
    held.seen(message(A, "m1"));
    expect(held.part("m1", text(`${COMMAND_NOTE_PREFIX} stopped for this session`))).toMatchObject({
      kind: "command",
    });
  });

  it("a compaction part settles it as synthetic", () => {
    const held = new HeldMessages();
    held.seen(message(A, "m1"));
    expect(held.part("m1", { type: "compaction", auto: true })).toMatchObject({ kind: "synthetic" });
  });

  it("a part of a message not held answers undefined, and holds nothing", () => {
    const held = new HeldMessages();
    expect(held.part("never-seen", text("hello"))).toBeUndefined();
    held.seen(message(A, "m1"));
    held.part("m1", text("hello"));
    expect(held.part("m1", text("a second part, after the verdict"))).toBeUndefined();
    expect(held.size).toBe(0);
  });

  it("a part whose fields have the wrong types is read as a part of unknown type, and settles nothing", () => {
    const held = new HeldMessages();
    held.seen(message(A, "m1"));
    expect(held.part("m1", { type: 7, text: 12, synthetic: "yes" })).toBe("pending");
    // `synthetic: "yes"` is not `true`: this text part counts as written by a person.
    expect(held.part("m1", { type: "text", text: "hi", synthetic: "yes" })).toMatchObject({ kind: "real" });
  });
});

describe("flush()", () => {
  it("settles the session's held messages with the parts that came, oldest first, and no other session's", () => {
    const held = new HeldMessages();
    const partless = message(A, "a1");
    const syntheticOnly = message(A, "a2");
    const compaction = message(A, "a3", { agent: "compaction" });
    held.seen(partless);
    held.seen(message(B, "b1"));
    held.seen(syntheticOnly);
    held.seen(compaction);
    held.part("a2", text("OpenCode's own addition", true));
    expect(held.flush(A)).toEqual([
      // With no text part at all, a message is a person's (an image, a file).
      { event: partless, kind: "real", claims: [] },
      { event: syntheticOnly, kind: "synthetic", claims: [] },
      { event: compaction, kind: "synthetic", claims: [] },
    ]);
    expect(held.size).toBe(1);
    expect(held.has("b1")).toBe(true);
    expect(held.flush(A)).toEqual([]);
  });

  it("of a session with nothing held settles nothing", () => {
    const held = new HeldMessages();
    held.seen(message(B, "b1"));
    expect(held.flush(A)).toEqual([]);
    expect(held.size).toBe(1);
  });
});

describe("the cap", () => {
  it(`beyond ${CAP} held messages the oldest is settled (with its parts) to make room; the newest is held`, () => {
    const held = new HeldMessages();
    const oldest = message(A, "m0");
    held.seen(oldest);
    held.part("m0", text("only synthetic so far", true));
    for (let i = 1; i < CAP; i++) expect(held.seen(message(A, `m${i}`))).toBeUndefined();
    expect(held.size).toBe(CAP);
    expect(held.seen(message(B, "newest"))).toEqual({ event: oldest, kind: "synthetic", claims: [] });
    expect(held.size).toBe(CAP);
    expect(held.has("m0")).toBe(false);
    expect(held.has("newest")).toBe(true);
    // The next one makes room again, with the next oldest (partless: a person's).
    expect(held.seen(message(B, "newer"))).toMatchObject({ event: { messageId: "m1" }, kind: "real" });
    expect(held.has("m2")).toBe(true);
  });
});

describe("drop()", () => {
  it("forgets one session's held messages without settling them; the others stay held", () => {
    const held = new HeldMessages();
    held.seen(message(A, "a1"));
    held.seen(message(A, "a2"));
    held.seen(message(B, "b1"));
    held.drop(A);
    expect(held.size).toBe(1);
    expect(held.part("a1", text("too late"))).toBeUndefined();
    expect(held.flush(A)).toEqual([]);
    expect(held.part("b1", text("still held"))).toMatchObject({ kind: "real" });
  });

  it("without a session, forgets every held message", () => {
    const held = new HeldMessages();
    held.seen(message(A, "a1"));
    held.seen(message(B, "b1"));
    held.drop();
    expect(held.size).toBe(0);
    expect(held.flush(A)).toEqual([]);
    expect(held.flush(B)).toEqual([]);
  });
});
