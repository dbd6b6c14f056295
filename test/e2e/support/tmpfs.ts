// A small tmpfs of its own for a test: a disk that fills up, or that can be made read-only. Needs mount rights, which
// `npm run test:mounts` gives any user: it runs these tests in a user and mount namespace of their own
// (scripts/in-namespace.sh), where the mount is theirs alone. It says so clearly when it cannot mount.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class Tmpfs {
  readonly path = mkdtempSync(join(tmpdir(), "tc-tmpfs-"));

  constructor(sizeKb: number) {
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k,mode=0755`, "tmpfs", this.path], { stdio: "pipe" });
    } catch (error) {
      throw new Error(
        "these tests mount a small tmpfs and need the right to: run them with `npm run test:mounts`, which gives them a " +
          `namespace of their own (npm test does) — ${(error as Error).message}`,
      );
    }
  }

  readonly(): void {
    execFileSync("mount", ["-t", "tmpfs", "-o", "remount,ro", "tmpfs", this.path], { stdio: "pipe" });
  }

  writable(): void {
    execFileSync("mount", ["-t", "tmpfs", "-o", "remount,rw", "tmpfs", this.path], { stdio: "pipe" });
  }

  /** Fills what is left of the file system with a ballast file; returns its path (remove it to free the space). */
  fill(): string {
    const ballast = join(this.path, "ballast");
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${ballast}`, "bs=4k"], { stdio: "pipe" });
    } catch {
      // dd stops with "No space left on device": that is the point.
    }
    return ballast;
  }

  dispose(): void {
    try {
      execFileSync("umount", ["-l", this.path], { stdio: "pipe" });
    } catch {
      // Already gone.
    }
    rmSync(this.path, { recursive: true, force: true });
  }
}
