// The states of a notice in the outbox, apart from the table's definition: the CLI checks `notices --state` when it
// parses its arguments, before it knows whether it will open a database (and load drizzle) at all.
export const NOTICE_STATES = ["pending", "sent", "failed", "folded"] as const;
export type NoticeState = (typeof NOTICE_STATES)[number];
