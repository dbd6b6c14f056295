// UserMessages promises: a user message is news only once, and only when it may be a person acting now — a message id
// this process chose for its own continuation is never a person, an update of a message already known (OpenCode
// re-publishes a user message when it summarises the turn) is an echo, and a message written more than a second before
// the process started is history; news is held until a part settles what it is (held-messages.ts). Every user message
// seen is known as one, so its streamed parts are not taken for assistant output. assistant() is true the first time
// an assistant message is seen, never again. remember() (while the store is paused) keeps only the role, so the same
// message is no news afterwards.
import { describe, expect, it } from "vitest";
import { UserMessages } from "../../../src/engine/see/user-messages.js";
import type { UserMessageEvent } from "../../../src/core/events.js";

const S = "ses_user";
const STARTED_AT = 1_800_000_000_000;
/** The margin in user-messages.ts: older than this before the start is history. */
const HISTORY_MARGIN_MS = 1000;

function user(messageId: string, createdAt: number | undefined = STARTED_AT + 5): UserMessageEvent {
  return { type: "message", sessionId: S, messageId, role: "user", createdAt, agent: "build" };
}

const said = (value: string) => ({ type: "text", text: value });

function messages(own: string[] = []) {
  return new UserMessages(STARTED_AT, (id) => own.includes(id));
}

describe("news", () => {
  it("a new user message is held until its deciding part, then settled as a person's", () => {
    const m = messages();
    const event = user("msg_1");
    expect(m.user(event)).toBeUndefined();
    expect(m.held).toBe(1);
    expect(m.part("msg_1", said("please also add tests"))).toEqual({ event, kind: "real", claims: [] });
    expect(m.held).toBe(0);
  });

  it("a message id this process chose for its continuation is never a person: not held, though known as a user's", () => {
    const m = messages(["msg_ours"]);
    expect(m.user(user("msg_ours"))).toBeUndefined();
    expect(m.held).toBe(0);
    expect(m.part("msg_ours", said("words a person might have written"))).toBeUndefined();
    expect(m.flush(S)).toEqual([]);
    expect(m.isUserMessage("msg_ours")).toBe(true);
  });

  it("an update of a message already known is an echo: held once, whatever its parts", () => {
    const m = messages();
    m.user(user("msg_1"));
    m.part("msg_1", said("first time"));
    expect(m.user(user("msg_1"))).toBeUndefined();
    expect(m.held).toBe(0);
    expect(m.part("msg_1", said("the summary's re-publication"))).toBeUndefined();
  });

  it("an echo while the message is still held does not hold it twice", () => {
    const m = messages();
    m.user(user("msg_1"));
    m.user(user("msg_1"));
    expect(m.held).toBe(1);
    expect(m.flush(S)).toHaveLength(1);
  });

  it("an id seen as an assistant's message is not news as a user's", () => {
    const m = messages();
    m.assistant("msg_1");
    expect(m.user(user("msg_1"))).toBeUndefined();
    expect(m.held).toBe(0);
  });

  it.each([
    { when: "long before the process started", createdAt: STARTED_AT - 60_000, news: false },
    { when: "just over a second before it started", createdAt: STARTED_AT - HISTORY_MARGIN_MS - 1, news: false },
    { when: "exactly a second before it started", createdAt: STARTED_AT - HISTORY_MARGIN_MS, news: true },
    { when: "just before it started", createdAt: STARTED_AT - 10, news: true },
    { when: "after it started", createdAt: STARTED_AT + 10, news: true },
    { when: "at no known time", createdAt: undefined, news: true },
  ])("a message written $when is news: $news (and known as a user's either way)", ({ createdAt, news }) => {
    const m = messages();
    m.user(user("msg_1", createdAt));
    expect(m.held).toBe(news ? 1 : 0);
    expect(m.isUserMessage("msg_1")).toBe(true);
  });
});

describe("isUserMessage", () => {
  it("is true for every user message seen, held or not, and false for assistants' and unknown ones", () => {
    const m = messages(["msg_own"]);
    m.user(user("msg_held"));
    m.user(user("msg_old", STARTED_AT - 60_000));
    m.user(user("msg_own"));
    m.assistant("msg_reply");
    expect(["msg_held", "msg_old", "msg_own", "msg_reply", "msg_unknown"].map((id) => m.isUserMessage(id))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});

describe("assistant()", () => {
  it("is true the first time an assistant message is seen, and false every time after", () => {
    const m = messages();
    expect(m.assistant("msg_a")).toBe(true);
    expect(m.assistant("msg_a")).toBe(false);
    expect(m.assistant("msg_a")).toBe(false);
    expect(m.assistant("msg_b")).toBe(true);
  });

  it("is false for an id known as a user's message, which stays a user's", () => {
    const m = messages();
    m.user(user("msg_1"));
    expect(m.assistant("msg_1")).toBe(false);
    expect(m.isUserMessage("msg_1")).toBe(true);
  });
});

describe("remember() while the store is paused", () => {
  it("keeps the role only: a user message remembered is a user's, holds nothing, and is no news when seen again", () => {
    const m = messages();
    m.remember("msg_1", "user");
    expect(m.isUserMessage("msg_1")).toBe(true);
    expect(m.held).toBe(0);
    expect(m.user(user("msg_1"))).toBeUndefined();
    expect(m.held).toBe(0);
  });

  it("an assistant message remembered is not new afterwards", () => {
    const m = messages();
    m.remember("msg_a", "assistant");
    expect(m.isUserMessage("msg_a")).toBe(false);
    expect(m.assistant("msg_a")).toBe(false);
  });
});

describe("flush() and drop()", () => {
  it("flush() settles the session's held messages with what came; drop() forgets them unsettled", () => {
    const m = messages();
    const first = user("msg_1");
    m.user(first);
    m.part("msg_1", { type: "text", text: "OpenCode's addition", synthetic: true });
    expect(m.flush(S)).toEqual([{ event: first, kind: "synthetic", claims: [] }]);
    m.user(user("msg_2"));
    m.user({ ...user("msg_3"), sessionId: "ses_other" });
    m.drop(S);
    expect(m.held).toBe(1);
    expect(m.flush(S)).toEqual([]);
    m.drop();
    expect(m.held).toBe(0);
    // Dropped is not forgotten as a user's message: its parts are still not assistant output.
    expect(m.isUserMessage("msg_2")).toBe(true);
  });
});
