// OwnMessageIds promises: a message is ours when this process chose its id, or when the database recorded the
// injection its text names with this very message id (in the same session); text alone never; each message's claims
// are read from the database once; a database that cannot be read makes `confirm` throw and settles nothing.
import { describe, expect, it } from "vitest";
import { idLine } from "../../../src/core/prompt.js";
import { OwnMessageIds } from "../../../src/engine/memory/own-messages.js";
import { runSync, type Script } from "../../../src/store/script.js";
import type { Statements } from "../../../src/store/statements.js";

const S = "ses_own";
/** Injections as the database records them: id → session and the message id chosen for it. */
const RECORDED: Record<string, { sessionId: string; messageId: string }> = {
  inj_theirs0001: { sessionId: S, messageId: "msg_theirs" },
  inj_elsewhere01: { sessionId: "ses_other", messageId: "msg_elsewhere" },
};

function database(failing = false) {
  let reads = 0;
  const fail = { now: failing };
  const statements = { injection: (id: string) => RECORDED[id] } as unknown as Statements;
  const store = {
    read: async <T>(script: Script<T>): Promise<T> => {
      reads++;
      if (fail.now) throw new Error("database is locked");
      return runSync(script, statements);
    },
  };
  return { store, reads: () => reads, recover: () => void (fail.now = false) };
}

const message = (id: string, text: string, synthetic?: boolean) => ({
  id,
  role: "user",
  parts: [{ type: "text", text, ...(synthetic ? { synthetic } : {}) }],
});

describe("OwnMessageIds", () => {
  it("knows the ids this process chose, without reading the database", async () => {
    const db = database();
    const own = new OwnMessageIds(db.store);
    own.choose("msg_mine", "inj_mine000001");
    await own.confirm(S, [message("msg_mine", `x\n${idLine("inj_mine000001")}`)]);
    expect(own.get("msg_mine")).toBe("inj_mine000001");
    expect(own.chose("msg_mine")).toBe(true);
    expect(db.reads()).toBe(0);
  });

  it("confirms another process's continuation (or one of ours before a restart) by its recorded message id", async () => {
    const own = new OwnMessageIds(database().store);
    await own.confirm(S, [message("msg_theirs", `x\n${idLine("inj_theirs0001")}`, true)]);
    expect(own.get("msg_theirs")).toBe("inj_theirs0001");
    expect(own.chose("msg_theirs")).toBe(false);
  });

  it("a person quoting an id line, or naming another session's injection, is not ours; each read once", async () => {
    const db = database();
    const own = new OwnMessageIds(db.store);
    const quoting = message("msg_person", `why ${idLine("inj_theirs0001")}?`);
    const elsewhere = message("msg_elsewhere", idLine("inj_elsewhere01"));
    await own.confirm(S, [quoting, elsewhere, message("msg_plain", "hello")]);
    expect(own.get("msg_person")).toBeUndefined();
    expect(own.get("msg_elsewhere")).toBeUndefined();
    expect(own.get("msg_plain")).toBeUndefined();
    expect(db.reads()).toBe(2);
    await own.confirm(S, [quoting, elsewhere]);
    expect(db.reads()).toBe(2);
  });

  it("a database that cannot be read settles nothing: the claim is checked again next time", async () => {
    const db = database(true);
    const own = new OwnMessageIds(db.store);
    const theirs = message("msg_theirs", idLine("inj_theirs0001"));
    await expect(own.confirm(S, [theirs])).rejects.toThrow("database is locked");
    expect(own.get("msg_theirs")).toBeUndefined();
    db.recover();
    expect(await own.confirmClaims(S, "msg_theirs", ["inj_theirs0001"])).toBe(true);
  });
});
