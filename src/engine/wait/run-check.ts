// One run of a check (a park's, or the `verify` command on a finished list): a shell command, run as OpenCode's bash
// tool runs one (`/bin/sh -c` in the project's folder, the user's environment), with no input, bounded in time (its
// whole process group killed past it, or when its caller aborts it) and in what is kept of its output (the last bytes,
// stdout and stderr as they came).
import { spawn } from "node:child_process";

export interface CheckResult {
  /** 0: the check passed. Null: it never ran (no such folder…) or was killed at its time limit. */
  exitCode: number | null;
  /** The last `MAX_OUTPUT_CHARS` of what it printed, or why it did not run. */
  output: string;
  timedOut: boolean;
  /** It was killed because its caller aborted it (a person stepped in). */
  aborted?: boolean;
}

export interface RunLimits {
  timeoutMs?: number;
  /** Aborted: the whole process group is killed, and the result says so. */
  signal?: AbortSignal;
  /** Variables added to this process's environment (the user's). */
  env?: Readonly<Record<string, string>>;
}

export type RunCheck = (command: string, cwd: string, limits?: RunLimits) => Promise<CheckResult>;

/**
 * The command runs in a process group of its own (killed whole at the time limit or an abort), and dies with this
 * process: a watcher in the group reads standard input, a pipe this process never writes, and kills the group when it
 * closes, as it does when this process ends, even by SIGKILL. A check left running by a process that died would run on
 * beside the one its successor starts (two test runs at once). The command itself gets no input (`</dev/null`), as
 * before, and its exit status is the group's.
 */
const TIED_TO_US =
  'exec 3<&0; /bin/sh -c "$1" </dev/null 3<&- & command=$!; ' +
  // Explicitly from the tie: a background list's input would otherwise be /dev/null, read at once as closed.
  "{ read -r _; kill -KILL -$$; } <&3 >/dev/null 2>&1 & watcher=$!; exec 3<&-; " +
  'wait "$command"; status=$?; kill "$watcher" 2>/dev/null; exit "$status"';

/** A check is a quick look (is CI green, is the file there), not the work itself. */
export const CHECK_TIMEOUT_MS = 60_000;
export const MAX_OUTPUT_CHARS = 8_000;

export function runCheck(
  command: string,
  cwd: string,
  { timeoutMs = CHECK_TIMEOUT_MS, signal, env }: RunLimits = {},
): Promise<CheckResult> {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    let aborted = false;
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-MAX_OUTPUT_CHARS);
    };
    if (signal?.aborted) return resolve({ exitCode: null, output: "", timedOut: false, aborted: true });
    const child = spawn("/bin/sh", ["-c", TIED_TO_US, "check", command], {
      cwd,
      // Standard input is the tie (see TIED_TO_US): never written, closed when this process ends.
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      ...(env ? { env: { ...process.env, ...env } } : {}),
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (result: CheckResult) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(aborted ? { ...result, exitCode: null, aborted: true } : result);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", (error) => {
      settle({ exitCode: null, output: `the check could not run: ${error.message}`, timedOut: false });
    });
    child.once("close", (code) => {
      const said = timedOut ? `${output}\n(stopped after ${Math.round(timeoutMs / 1000)} s)` : output;
      settle({ exitCode: timedOut ? null : code, output: said, timedOut });
    });
  });
}
