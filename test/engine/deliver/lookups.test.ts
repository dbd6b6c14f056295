// Lookups answers "was it delivered?" for a continuation whose outcome the enforcer does not know. It promises: the
// continuation is found among the session's latest 200 messages by the message id it was sent with, or by the injection
// id its text carries (whatever id OpenCode gave the message); anything else is not found; a session that cannot be
// read (a failed read, an answer that is no message list, a read that does not answer within hostTimeoutMs) gives no
// answer (undefined) and a debug line in the log, never a guess. afterFailure() looks only once OpenCode had time to
// write the message (300 ms after the failed call) and says found, not_found or unreadable. Over the scripted OpenCode
// of test/support/fake-host.ts, in the rig the enforcer wires (test/support/delivery-rig.ts).
import { describe, expect, it } from "vitest";
import type { Findable } from "../../../src/engine/deliver/lookups.js";
import { idLine } from "../../../src/core/prompt.js";
import { build, rig, S, useDeliveryRig } from "../../support/delivery-rig.js";
import { advance } from "../../support/fake-time.js";

useDeliveryRig();

const OURS: Findable = { id: "inj_ours_0001", sessionId: S, messageId: "msg_ours_0001" };

/** A user message carrying `injectionId`'s id line, as a continuation's text does. */
const carrying = (injectionId: string, messageId: string) =>
  rig.host.addUserMessage(S, `Continue with the todos.\n${idLine(injectionId)}`, { id: messageId });

describe("find", () => {
  it("finds it by the message id it was sent with, whatever its text", async () => {
    build();
    rig.host.addUserMessage(S, "(edited: no marker left)", { id: OURS.messageId! });
    rig.host.addAssistantMessage(S);
    expect(await rig.lookups.find(OURS)).toBe(true);
  });

  it("never by its text: its id line under a message id it was not sent with (a person quoting it) is not it", async () => {
    build();
    carrying(OURS.id, "msg_chosen_by_someone_else");
    expect(await rig.lookups.find(OURS)).toBe(false);
    expect(await rig.lookups.find({ ...OURS, messageId: null })).toBe(false);
  });

  it("does not find it when neither its message id nor its injection id is there (another continuation is)", async () => {
    build();
    carrying("inj_someone_else", "msg_someone_else");
    rig.host.addUserMessage(S, `quoting ${OURS.messageId} and ${OURS.id} in plain words`);
    expect(await rig.lookups.find(OURS)).toBe(false);
    expect(await rig.lookups.find({ ...OURS, messageId: null })).toBe(false);
    expect(rig.host.logs.filter((l) => l.level === "debug")).toEqual([]);
  });

  it("looks among the latest 200 messages only", async () => {
    build();
    carrying(OURS.id, OURS.messageId!);
    for (let i = 0; i < 199; i++) rig.host.addAssistantMessage(S);
    expect(await rig.lookups.find(OURS)).toBe(true);
    rig.host.addAssistantMessage(S);
    expect(await rig.lookups.find(OURS)).toBe(false);
  });

  it.each([
    { how: "a read that fails", behaviour: "fail" as const, error: "fetch failed" },
    { how: "an answer that is no message list", behaviour: "garbage" as const, error: "no message list" },
  ])("$how: no answer (undefined), and a debug line that says why", async ({ behaviour, error }) => {
    build();
    carrying(OURS.id, OURS.messageId!);
    rig.host.messagesBehaviour = behaviour;
    expect(await rig.lookups.find(OURS)).toBeUndefined();
    expect(rig.host.logs).toEqual([
      {
        level: "debug",
        message: "could not look for a continuation in the session",
        extra: { injectionId: OURS.id, error: expect.stringContaining(error) },
      },
    ]);
  });

  it("a read that does not answer is given up after hostTimeoutMs: no answer", async () => {
    build({ hostTimeoutMs: 2000 });
    rig.host.messagesBehaviour = "hang";
    let answer: boolean | undefined | "waiting" = "waiting";
    const looking = rig.lookups.find(OURS).then((found) => (answer = found));
    await advance(1999);
    expect(answer).toBe("waiting");
    await advance(1);
    await looking;
    expect(answer).toBeUndefined();
    expect(rig.host.logs).toMatchObject([
      { level: "debug", extra: { injectionId: OURS.id, error: expect.stringContaining("2000") } },
    ]);
  });
});

describe("afterFailure", () => {
  it("reads the session only once OpenCode had time to write the message (300 ms)", async () => {
    build();
    let verdict: string | undefined;
    const looking = rig.lookups.afterFailure(OURS).then((v) => (verdict = v));
    // OpenCode writes the message of a prompt it accepted just after answering.
    carrying(OURS.id, OURS.messageId!);
    await advance(299);
    expect(rig.host.calls.messages).toBe(0);
    await advance(1);
    await looking;
    expect(rig.host.calls.messages).toBe(1);
    expect(verdict).toBe("found");
  });

  it.each([
    { session: "holds it", prepare: () => void carrying(OURS.id, OURS.messageId!), verdict: "found" },
    { session: "does not hold it", prepare: () => void rig.host.addAssistantMessage(S), verdict: "not_found" },
    { session: "cannot be read", prepare: () => void (rig.host.messagesBehaviour = "fail"), verdict: "unreadable" },
  ])("a session that $session: $verdict", async ({ prepare, verdict }) => {
    build();
    prepare();
    const looking = rig.lookups.afterFailure(OURS);
    await advance(300);
    expect(await looking).toBe(verdict);
  });
});
