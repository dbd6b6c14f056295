// The session columns a state change may write, on both backends: a patch rewrites them all, so that one statement
// serves every patch (and a column added to the schema is written by both stores once it is listed here).
import type { SessionRow } from "./schema.js";
import type { SessionUpdate } from "./types.js";

/** The look owed: written whole with the row like every column, but set only by changes/look-owed.ts. */
type LookColumn = "recheckAt" | "owedSince";

export const PATCHABLE = [
  "parentId",
  "projectId",
  "title",
  "stoppedAt",
  "stopSource",
  "recoveringSince",
  "lastErrorAt",
  "lastErrorName",
  "lastErrorKind",
  "lastErrorRetryAfterMs",
  "errorStreak",
  "abortedAt",
  "tokenLimitAt",
  "continuations",
  "stagnantContinuations",
  "workContinuations",
  "fileLedger",
  "continuationCost",
  "continuationTokens",
  "allowedContinuations",
  "allowedCost",
  "allowedTokens",
  "unproductiveReplies",
  "todoSnapshot",
  "consecutiveFailures",
  "backoffUntil",
  "lastUserMessageAt",
  "pausedAt",
  "pauseMessageId",
  "pauseBaseline",
  "recheckAt",
  "owedSince",
  "resumedAt",
  "notifiedStop",
  "wakeNote",
  "agent",
  "modelProvider",
  "modelId",
  "variant",
  "deletedAt",
] as const satisfies ReadonlyArray<keyof SessionUpdate | LookColumn>;

export type PatchableColumn = (typeof PATCHABLE)[number];

/** What `upsertSession` writes: any of the columns a change may set. */
export type SessionColumns = Partial<Pick<SessionRow, PatchableColumn>>;

/**
 * The columns `columns` names (undefined ones too: written as NULL, as a patch of the whole row wrote them), in
 * PATCHABLE's order: the statement that writes them is one per set of names.
 */
export function patchedColumns(columns: SessionColumns): PatchableColumn[] {
  return PATCHABLE.filter((key) => key in columns);
}
