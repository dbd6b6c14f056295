// The scope a person's action on a session is written under (the CLI's stop, resume, allow, wake and unpark; the
// page's actions): the session's own directory and server when the database knows it, else what the caller gives.
import type { EngineStore } from "../port.js";
import { session } from "../reads.js";

export async function scopeOf(store: EngineStore, sessionId: string, directory: string | undefined) {
  const known = await store.read(session(sessionId));
  return { sessionId, directory: known?.directory ?? directory ?? process.cwd(), server: known?.server ?? null };
}
