// Notices as the core makes them, for the channel tests: one per kind, and one with every optional field.
import { noticeOf, type Notice, type NoticeKind } from "../../src/core/notices.js";

const REASON_OF: Record<NoticeKind, string> = {
  question: "waiting_for_user",
  budget: "budget_exhausted",
  stuck: "stagnation",
  done: "todos_complete",
  error: "provider_error",
  waiting: "parked",
};

export function sampleNotice(kind: NoticeKind = "budget", extra: Partial<Notice> = {}): Notice {
  const notice = noticeOf({
    id: `ntc_${kind}_01`,
    now: Date.UTC(2026, 10, 27, 9, 30, 0),
    directory: "/home/you/my-project",
    sessionId: "ses_0123456789",
    title: "Fix the parser",
    reason: REASON_OF[kind],
    detail: { count: 20, limit: 20 },
    todos: { total: 5, completed: 3, open: 2 },
    continuations: { count: 4, cost: 0.0024, tokens: 12_000 },
  });
  if (!notice) throw new Error(`no notice for ${kind}`);
  return { ...notice, ...extra };
}

/** A notice with every optional field set: a hint and notices folded into it. */
export function fullNotice(): Notice {
  const notice = sampleNotice("question", { hint: "Answer in the session." });
  return {
    ...notice,
    session: { ...notice.session, url: "https://tc.example.test/session/ses_0123456789" },
    folded: [{ id: "ntc_earlier", kind: "stuck", reason: "stagnation", text: "Stopped: no progress.", at: notice.at }],
  };
}
