// One run of a park's check: the agent's shell command, run as OpenCode's bash tool runs one (`/bin/sh -c` in the
// project's folder), with no input, bounded in time (its whole process group killed past it) and in what is kept of
// its output (the last bytes, stdout and stderr as they came).
import { spawn } from "node:child_process";

export interface CheckResult {
  /** 0: the check passed. Null: it never ran (no such folder…) or was killed at its time limit. */
  exitCode: number | null;
  /** The last `MAX_OUTPUT_CHARS` of what it printed, or why it did not run. */
  output: string;
  timedOut: boolean;
}

export type RunCheck = (command: string, cwd: string) => Promise<CheckResult>;

/** A check is a quick look (is CI green, is the file there), not the work itself. */
export const CHECK_TIMEOUT_MS = 60_000;
export const MAX_OUTPUT_CHARS = 8_000;

export function runCheck(command: string, cwd: string, timeoutMs = CHECK_TIMEOUT_MS): Promise<CheckResult> {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-MAX_OUTPUT_CHARS);
    };
    const child = spawn("/bin/sh", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ exitCode: null, output: `the check could not run: ${error.message}`, timedOut: false });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      const said = timedOut ? `${output}\n(stopped after ${Math.round(timeoutMs / 1000)} s)` : output;
      resolve({ exitCode: timedOut ? null : code, output: said, timedOut });
    });
  });
}
