// A session as the TUI reads it (store/operator/session-view.ts), with nothing stopped, paused, counted or decided.
import type { SessionView } from "../../src/store/operator/session-view.js";

export function aSessionView(overrides: Partial<SessionView> = {}): SessionView {
  return {
    sessionId: "ses_1",
    stoppedAt: null,
    stopSource: null,
    pausedAt: null,
    continuations: 0,
    maxContinuations: null,
    spent: { cost: 0, tokens: 0 },
    maxCost: null,
    countdown: null,
    lastDecision: null,
    park: null,
    checking: null,
    ...overrides,
  };
}
