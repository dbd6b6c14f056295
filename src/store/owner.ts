// Who owns a countdown: `host/pid/random`. A process that restarts gets a new id; another process on the same host
// can tell a dead owner (its pid is gone) from a live one that is only slow (SIGSTOP), and wait out the lease of the latter.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

export function newOwnerId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
}

/** False only when the owner certainly is gone: same host, and no process with its pid. */
export function ownerMayBeAlive(owner: string | null): boolean {
  if (!owner) return false;
  const [host, pidText] = owner.split("/");
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return liveOwners.has(owner);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Owner ids in use in this process, with how many engines (or a fleet replica) use each. */
const liveOwners = new Map<string, number>();

/**
 * Engines of this process say they are alive, so that an id of a disposed or abandoned engine here reads as gone.
 * Counted: the engines of a fleet replica share one id, which is alive while any of them (or the replica) uses it.
 */
export function registerOwner(owner: string): void {
  liveOwners.set(owner, (liveOwners.get(owner) ?? 0) + 1);
}

export function unregisterOwner(owner: string): void {
  const users = (liveOwners.get(owner) ?? 0) - 1;
  if (users > 0) liveOwners.set(owner, users);
  else liveOwners.delete(owner);
}
