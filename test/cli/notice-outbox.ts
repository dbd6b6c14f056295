// Notices in a database as the engine leaves them, written by the project's own change scripts (a stop told to its
// channels, then claimed and settled by a sender): one sent, one failed for good, one waiting for its retry after an
// error, one held back by the rate limit — for the CLI's `notices` and `doctor` on SQLite and PostgreSQL alike.
import { NOTICE_KINDS } from "../../src/core/notices.js";
import { claimNotices } from "../../src/store/changes/claim-notices.js";
import { settleNotice, type NoticeOutcome } from "../../src/store/changes/settle-notice.js";
import { tellStopChange } from "../../src/store/changes/tell-stop.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";

export const OUTBOX_DIRECTORY = "/work/project";
export const BUDGET_SESSION = "ses_notice_budget";
export const QUESTION_SESSION = "ses_notice_question";
/** `hook` takes every kind, `phone` budgets only; `old` is a channel a project configured once. */
const CHANNELS = [
  { name: "hook", kinds: [...NOTICE_KINDS] },
  { name: "phone", kinds: ["budget" as const] },
  { name: "old", kinds: [...NOTICE_KINDS] },
];

export interface Outbox {
  /** When the budget notice went out to `hook` and to `old`. */
  sentAt: number;
  /** When `phone` gave up on it, and when `hook` failed the question's first try. */
  phoneFailedAt: number;
  hookFailedAt: number;
  /** When `hook` tries the question again. */
  retryAt: number;
  /** What the budget notice says (the body's `text`). */
  budgetText: string;
}

/**
 * Two stops of `OUTBOX_DIRECTORY` told to three channels, a second apart, a minute ago: the budget stop (hook, phone,
 * old), then the question (hook, old). Then: budget → hook and old sent, phone refused for good; question → hook
 * failed and retried in two minutes, old held back by the rate limit for an hour.
 */
export async function writeOutbox(store: OperatorStore): Promise<Outbox> {
  const t0 = Date.now() - 60_000;
  const scope = (sessionId: string) => ({ directory: OUTBOX_DIRECTORY, sessionId });
  await store.change(
    tellStopChange(
      scope(BUDGET_SESSION),
      "budget_exhausted",
      { continuations: 5, maxContinuations: 5 },
      { noticeId: "ntc_budget", channels: CHANNELS, title: "Fix the parser" },
      t0,
    ),
  );
  await store.change(
    tellStopChange(
      scope(QUESTION_SESSION),
      "waiting_for_user",
      {},
      { noticeId: "ntc_question", channels: CHANNELS },
      t0 + 1000,
    ),
  );
  const claimed = await store.change(
    claimNotices({ directory: OUTBOX_DIRECTORY }, ["hook", "phone", "old"], "cli-test", t0 + 2000, 600_000, 10),
  );
  const row = (id: string) => claimed.find((r) => r.id === id)!;
  const settle = (id: string, outcome: NoticeOutcome, type: string, at: number) =>
    store.change(settleNotice(row(id), "cli-test", outcome, type, at));
  const sent = (id: string): NoticeOutcome => ({ sent: true, body: row(id).body, folded: [], deliveryMs: 12 });
  const failed = (id: string, error: string, retryAt?: number): NoticeOutcome => ({
    sent: false,
    error,
    ...(retryAt === undefined ? {} : { retryAt }),
    body: row(id).body,
    deliveryMs: 7,
  });
  const outbox: Outbox = {
    sentAt: t0 + 3000,
    phoneFailedAt: t0 + 4000,
    hookFailedAt: t0 + 5000,
    retryAt: Date.now() + 120_000,
    budgetText: (JSON.parse(row("ntc_budget:hook").body) as { text: string }).text,
  };
  await settle("ntc_budget:hook", sent("ntc_budget:hook"), "webhook", outbox.sentAt);
  await settle("ntc_budget:old", sent("ntc_budget:old"), "discord", outbox.sentAt);
  await settle(
    "ntc_budget:phone",
    failed("ntc_budget:phone", "404 from ntfy.example.com"),
    "ntfy",
    outbox.phoneFailedAt,
  );
  const retry = failed("ntc_question:hook", "503 from hooks.example.com", outbox.retryAt);
  await settle("ntc_question:hook", retry, "webhook", outbox.hookFailedAt);
  await settle("ntc_question:old", { heldUntil: Date.now() + 3_600_000, why: "rate limit" }, "discord", t0 + 6000);
  return outbox;
}
