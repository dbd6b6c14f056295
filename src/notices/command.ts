// A program as a channel, for what no HTTP service reaches (a desktop popup: notify-send, terminal-notifier): run
// without a shell, the notice as JSON on its stdin and its kind in TODO_CONTINUATION_NOTICE_KIND. Exit 0 is delivered;
// another exit is worth another try (the program may depend on something that comes back); a program that is gone or
// not executable is not. Killed, with what it started, when it outlives the channel's timeout.
import { spawn, type ChildProcess } from "node:child_process";
import type { Notice } from "../core/notices.js";
import { firstLine } from "./text.js";
import type { CommandChannel, DeliveryResult } from "./types.js";

export const KIND_VARIABLE = "TODO_CONTINUATION_NOTICE_KIND";

/** What of stderr is kept: the first line is all an error shows. */
const STDERR_LIMIT = 4096;

/**
 * After the program exits, how long its stderr may stay open: a program that left something running in the background
 * holding it (`notify-send … &`) has still answered.
 */
const AFTER_EXIT_MS = 500;

/** A process group of its own where there are groups, so that a timeout kills what the program started too. */
const OWN_GROUP = process.platform !== "win32";

function killAll(child: ChildProcess): void {
  try {
    if (OWN_GROUP && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    else child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
}

function spawnFailed(channel: CommandChannel, error: NodeJS.ErrnoException): DeliveryResult {
  const code = error.code ?? "error";
  const why = code === "ENOENT" ? "not found" : code === "EACCES" ? "not executable" : error.message;
  const lasting = code === "ENOENT" || code === "EACCES";
  return { ok: false, retryable: !lasting, error: `${channel.command} could not start: ${why} (${code})` };
}

function exited(channel: CommandChannel, code: number | null, signal: string | null, stderr: string): DeliveryResult {
  if (code === 0) return { ok: true };
  const said = firstLine(stderr);
  const how = code !== null ? `exited with code ${code}` : `was killed by ${signal}`;
  return { ok: false, retryable: true, error: `${channel.command} ${how}${said ? `: ${said}` : ""}` };
}

export function deliverCommand(channel: CommandChannel, notice: Notice): Promise<DeliveryResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: DeliveryResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    let child: ChildProcess;
    try {
      child = spawn(channel.command, channel.args ?? [], {
        stdio: ["pipe", "ignore", "pipe"],
        env: { ...process.env, [KIND_VARIABLE]: notice.kind },
        detached: OWN_GROUP,
      });
    } catch (error) {
      return resolve(spawnFailed(channel, error as NodeJS.ErrnoException));
    }
    const timer = setTimeout(() => {
      killAll(child);
      finish({ ok: false, retryable: true, error: `${channel.command} did not finish within ${channel.timeoutMs} ms` });
    }, channel.timeoutMs);
    let stderr = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk;
    });
    // A program may exit without reading its stdin: the write then fails with EPIPE, which says nothing about it.
    child.stdin!.on("error", () => undefined);
    child.stdin!.end(JSON.stringify(notice));
    child.on("error", (error) => finish(spawnFailed(channel, error)));
    child.on("exit", (code, signal) => {
      setTimeout(() => {
        child.stderr!.destroy();
        finish(exited(channel, code, signal, stderr));
      }, AFTER_EXIT_MS).unref();
    });
    child.on("close", (code, signal) => finish(exited(channel, code, signal, stderr)));
  });
}
