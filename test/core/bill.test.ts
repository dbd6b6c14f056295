// The bill of a continuation's turn, from messages shaped as OpenCode 1.18.33 sends them (read through the host
// adapter, as the engine reads them).
import { describe, expect, it } from "vitest";
import { billTurn, tokenTotal } from "../../src/core/bill.js";
import type { SessionMessage } from "../../src/core/messages.js";
import { normalizeMessage } from "../../src/host/opencode-host.js";

const OURS = "msg_ours";
const tokens = (input: number, output: number, reasoning = 0, read = 0, write = 0) => ({
  total: input + output + reasoning + read + write,
  input,
  output,
  reasoning,
  cache: { read, write },
});
const step = (cost: number, t: ReturnType<typeof tokens>) => ({ type: "step-finish", reason: "stop", cost, tokens: t });
const tool = (name: string) => ({ type: "tool", tool: name, state: { status: "completed", input: {}, output: "" } });

let seq = 0;
function assistant(
  parentID: string,
  o: { cost?: number; tokens?: ReturnType<typeof tokens>; parts?: object[]; completed?: boolean; error?: object } = {},
): SessionMessage {
  seq++;
  return normalizeMessage({
    info: {
      id: `msg_a${seq}`,
      sessionID: "ses_1",
      role: "assistant",
      parentID,
      providerID: "scripted",
      modelID: `model-${seq}`,
      time: { created: 1000 * seq, ...(o.completed === false ? {} : { completed: 1000 * seq + 500 }) },
      cost: o.cost ?? 0,
      tokens: o.tokens ?? tokens(0, 0),
      finish: "stop",
      ...(o.error ? { error: o.error } : {}),
    },
    parts: o.parts ?? [],
  })!;
}
const user = (id: string): SessionMessage =>
  normalizeMessage({ info: { id, sessionID: "ses_1", role: "user", time: { created: 1 } }, parts: [] })!;

describe("the bill of a continuation's turn", () => {
  it("every message answering it, every step: tokens summed from the steps, cost as OpenCode summed it", () => {
    // Two model calls; the second took two steps, and OpenCode left only its last step's tokens on the message.
    const messages = [
      user(OURS),
      assistant(OURS, { cost: 0.0006, tokens: tokens(100, 20), parts: [tool("write"), step(0.0006, tokens(100, 20))] }),
      assistant(OURS, {
        cost: 0.0015,
        tokens: tokens(200, 30, 5, 50),
        parts: [tool("bash"), step(0.0005, tokens(80, 10)), tool("edit"), step(0.001, tokens(200, 30, 5, 50))],
      }),
    ];
    const bill = billTurn(messages, OURS);
    expect(bill).toEqual({
      outcome: "completed",
      finish: "stop",
      providerId: "scripted",
      modelId: messages[1]!.modelId,
      messages: 2,
      steps: 3,
      toolCalls: 3,
      tokens: { input: 380, output: 60, reasoning: 5, cacheRead: 50, cacheWrite: 0 },
      totalTokens: 495,
      cost: 0.0021,
      startedAt: messages[1]!.createdAt,
      endedAt: messages[2]!.completedAt,
    });
    expect(tokenTotal(bill.tokens)).toBe(bill.totalTokens);
  });

  it("only what answered our message: a person's message mid-turn takes the calls after it", () => {
    const messages = [
      user(OURS),
      assistant(OURS, { cost: 0.01, parts: [step(0.01, tokens(10, 1))] }),
      user("msg_person"),
      assistant("msg_person", { cost: 0.5, parts: [step(0.5, tokens(1000, 100))] }),
    ];
    expect(billTurn(messages, OURS)).toMatchObject({ messages: 1, cost: 0.01, totalTokens: 11 });
  });

  it("a turn that failed mid-stream is billed: no step finished, so the message's own tokens, once", () => {
    const failed = assistant(OURS, {
      tokens: tokens(7, 0),
      error: { name: "APIError", data: { message: "overloaded", statusCode: 529 } },
    });
    expect(billTurn([user(OURS), failed], OURS)).toMatchObject({
      outcome: "error",
      error: "APIError",
      steps: 0,
      totalTokens: 7,
      cost: 0,
    });
  });

  it("an aborted turn, one still open when OpenCode stopped, and none at all", () => {
    const aborted = assistant(OURS, { error: { name: "MessageAbortedError", data: { message: "aborted" } } });
    expect(billTurn([user(OURS), aborted], OURS)).toMatchObject({ outcome: "aborted", error: "MessageAbortedError" });
    const open = assistant(OURS, { completed: false, cost: 0.2, parts: [step(0.2, tokens(5, 5))] });
    expect(billTurn([user(OURS), open], OURS)).toMatchObject({ outcome: "interrupted", cost: 0.2, totalTokens: 10 });
    expect(billTurn([user(OURS)], OURS)).toEqual({
      outcome: "no_turn",
      messages: 0,
      steps: 0,
      toolCalls: 0,
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      totalTokens: 0,
      cost: 0,
    });
  });

  it("a model without a price: cost 0, the tokens still count", () => {
    const local = assistant(OURS, { cost: 0, parts: [step(0, tokens(300, 40, 0, 100, 20))] });
    expect(billTurn([user(OURS), local], OURS)).toMatchObject({ cost: 0, totalTokens: 460 });
  });

  it("garbage in OpenCode's numbers reads as 0, never as a negative or NaN bill", () => {
    const odd = normalizeMessage({
      info: { id: "msg_odd", role: "assistant", parentID: OURS, time: { created: 1 }, cost: -3, tokens: "many" },
      parts: [{ type: "step-finish", cost: Number.NaN, tokens: { input: -5, output: "2", cache: null } }],
    })!;
    expect(billTurn([user(OURS), odd], OURS)).toMatchObject({ cost: 0, totalTokens: 0, steps: 1 });
  });
});
