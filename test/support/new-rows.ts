// The rows a store test writes, made one way for every suite: a countdown armed at `now` for two seconds, and the
// continuation that fires it two seconds later.
import type { NewCountdown, NewInjection } from "../../src/store/port.js";

export interface RowFactory {
  countdown(id: string, sessionId?: string, extra?: Partial<NewCountdown>): NewCountdown;
  injection(id: string, countdownId: string, extra?: Partial<NewInjection>): NewInjection;
}

export function newRows(now: number, owner: string, directory = "/p"): RowFactory {
  return {
    countdown: (id, sessionId = "ses_1", extra = {}) => ({
      id,
      sessionId,
      directory,
      armedAt: now,
      deadlineAt: now + 2000,
      owner,
      leaseUntil: now + 15_000,
      attempt: 0,
      todosOpen: 2,
      todosTotal: 3,
      ...extra,
    }),
    injection: (id, countdownId, extra = {}) => ({
      id,
      sessionId: "ses_1",
      directory,
      countdownId,
      messageId: `msg_${id}`,
      createdAt: now + 2000,
      agent: "build",
      model: "p/m",
      variant: null,
      todosTotal: 3,
      todosOpen: 2,
      attempt: 0,
      owner,
      leaseUntil: now + 60_000,
      ...extra,
    }),
  };
}
