// A small tmpfs of its own for a test: a disk that fills up, or that can be made read-only. Needs mount rights
// (root with CAP_SYS_ADMIN, as on this project's CI machine); it says so clearly when it cannot.
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
        `these tests mount a small tmpfs and need the right to (root with CAP_SYS_ADMIN): ${(error as Error).message}`,
      );
    }
  }

  readonly(): void {
    execFileSync("mount", ["-o", "remount,ro", this.path], { stdio: "pipe" });
  }

  writable(): void {
    execFileSync("mount", ["-o", "remount,rw", this.path], { stdio: "pipe" });
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
