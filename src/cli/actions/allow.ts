import { allowedWords, liftedWords } from "../../core/explain.js";
import { allow as allowSession, type Grant } from "../../store/changes/allow.js";
import { session } from "../../store/reads.js";
import { withStore } from "../database.js";
import { print, printJson, snakeCased, type GlobalOptions } from "../output.js";
import { scopeOf } from "../../store/operator/session-scope.js";
import { requireSeen } from "./stop-resume.js";

export async function allow(sessionId: string, options: Grant, { db, json }: GlobalOptions): Promise<void> {
  const grant = { continuations: options.continuations, cost: options.cost, tokens: options.tokens };
  // A running enforcer of the session's directory looks at it within a lease tick (~5 s): see changes/allow.ts.
  const { changed, granted, lifted, stopped } = await withStore(db, async (store) => {
    await requireSeen(store, db, sessionId, "");
    const allowed = await store.change(
      allowSession(await scopeOf(store, sessionId, undefined), grant, "cli", Date.now()),
    );
    return { ...allowed, stopped: (await store.read(session(sessionId)))?.stoppedAt != null };
  });
  if (json) return printJson(snakeCased({ sessionId, changed, granted, lifted, stopped }));
  if (!changed) return print(`${sessionId}: nothing to allow`);
  const what = liftedWords(lifted);
  const next = what
    ? `lifted ${what}; a running enforcer looks at it again within seconds`
    : "it counts until your next message in it or a resume";
  const held = stopped ? `; it is still stopped: \`todo-continuation resume ${sessionId}\` lifts that` : "";
  print(`allowed ${allowedWords(granted)} to ${sessionId}; ${next}${held}`);
}
