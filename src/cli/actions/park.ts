// A person's hand on a park (issue 48): `wake` ends it now, owing the session a look that a running enforcer of its
// directory takes within a lease tick; `unpark` drops it. Both through the same store changes as the engine's.
import { unpark as unparkSession } from "../../store/changes/unpark.js";
import { wake as wakeSession } from "../../store/changes/wake.js";
import { withStore } from "../database.js";
import { print, printJson, snakeCased, type GlobalOptions } from "../output.js";
import { scopeOf } from "../../store/operator/session-scope.js";
import { requireSeen } from "./stop-resume.js";

export async function wake(sessionId: string, _options: object, { db, json }: GlobalOptions): Promise<void> {
  const { woke, park } = await withStore(db, async (store) => {
    await requireSeen(store, db, sessionId, "");
    return store.change(wakeSession(await scopeOf(store, sessionId, undefined), "command", Date.now()));
  });
  if (json) return printJson(snakeCased({ sessionId, woke, parkId: park?.id ?? null }));
  print(
    woke
      ? `woke ${sessionId}: a running enforcer counts down and continues it within seconds`
      : `${sessionId} is not parked`,
  );
}

export async function unpark(sessionId: string, _options: object, { db, json }: GlobalOptions): Promise<void> {
  const { unparked } = await withStore(db, async (store) => {
    await requireSeen(store, db, sessionId, "");
    return store.change(unparkSession(await scopeOf(store, sessionId, undefined), "command", Date.now()));
  });
  if (json) return printJson(snakeCased({ sessionId, unparked }));
  print(unparked ? `unparked ${sessionId}: nothing will wake it` : `${sessionId} is not parked`);
}
