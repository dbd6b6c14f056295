import { liftedWords } from "../../core/explain.js";
import { resume as resumeSession } from "../../store/changes/resume.js";
import { stop as stopSession } from "../../store/changes/stop.js";
import type { OperatorStore } from "../../store/operator/operator.js";
import { sessionSeen } from "../../store/operator/queries.js";
import { scopeOf } from "../../store/operator/session-scope.js";
import { neverSeen, withStore } from "../database.js";
import { UsageError } from "../errors.js";
import { print, printJson, snakeCased, type GlobalOptions } from "../output.js";

export interface StopOptions {
  directory?: string;
  force?: boolean;
}

/**
 * A session id the database has never seen is most likely a typo: refused (exit 2) rather than recorded, unless the
 * person says they mean a session not seen yet.
 */
export async function requireSeen(
  store: OperatorStore,
  db: string | undefined,
  sessionId: string,
  force: string,
): Promise<void> {
  if (await sessionSeen(store.reader, sessionId)) return;
  throw new UsageError(`${neverSeen(db, sessionId)}${force}`);
}

export async function stop(sessionId: string, options: StopOptions, { db, json }: GlobalOptions): Promise<void> {
  const { changed, cancelled } = await withStore(db, async (store) => {
    if (!options.force)
      await requireSeen(store, db, sessionId, "; to stop a session before its first idle, add --force");
    return store.change(stopSession(await scopeOf(store, sessionId, options.directory), "cli", Date.now()));
  });
  if (json)
    return printJson(snakeCased({ sessionId, stopped: true, changed, cancelledCountdown: cancelled?.id ?? null }));
  print(
    changed
      ? `stopped ${sessionId}${cancelled ? " (its armed countdown was cancelled)" : ""}; lift it with \`todo-continuation resume ${sessionId}\` or /resume-continuation`
      : `${sessionId} was already stopped`,
  );
}

export async function resume(sessionId: string, _options: object, { db, json }: GlobalOptions): Promise<void> {
  // A running enforcer of the session's directory looks at it within a lease tick (~5 s): see changes/resume.ts.
  const { changed, lifted } = await withStore(db, async (store) => {
    await requireSeen(store, db, sessionId, "");
    return store.change(resumeSession(await scopeOf(store, sessionId, undefined), "cli", Date.now()));
  });
  if (json) return printJson(snakeCased({ sessionId, stopped: false, changed, lifted }));
  const what = liftedWords(lifted);
  print(
    changed
      ? `resumed ${sessionId}: ${what ? `lifted ${what}` : "its loop protections start over"}; a running enforcer looks at it again within seconds`
      : `${sessionId} was not stopped, paused or held back`,
  );
}
