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

const liveOwners = new Set<string>();

/** Engines of this process say they are alive, so that an id of a disposed or abandoned engine here reads as gone. */
export function registerOwner(owner: string): void {
  liveOwners.add(owner);
}

export function unregisterOwner(owner: string): void {
  liveOwners.delete(owner);
}
