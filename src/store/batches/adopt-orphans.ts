// Adopting orphans in chunks, each its own transaction (changes/adopt.ts), so that a hundred thousand orphans never
// hold the database (or the event loop) for long.
import { adoptChunk, type Adoption, type Orphan } from "../changes/adopt.js";
import type { EngineStore } from "../port.js";

/** Orphans per transaction: 2,000 rows hold SQLite's write lock (and the event loop) for ~20-40 ms; 500 made a 100k
 * recovery 2x its raw floor in commits and yields alone. */
const CHUNK = 2000;

const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Adopts `orphans`; for each, whether this process took it. */
export async function adopt(store: EngineStore, orphans: Orphan[], adoption: Adoption): Promise<boolean[]> {
  const taken: boolean[] = [];
  for (let start = 0; start < orphans.length; start += CHUNK) {
    if (start > 0) await yieldToEvents();
    taken.push(...(await store.change(adoptChunk(orphans.slice(start, start + CHUNK), adoption))));
  }
  return taken;
}
