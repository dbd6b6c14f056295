// Starting engine processes under Node (tsx) or under the Bun that ships inside opencode-ai.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(here, "..", "..");

/** The Bun that hosts OpenCode plugins: the opencode binary itself, run with BUN_BE_BUN=1. */
export function opencodeBinary(): string {
  const require = createRequire(import.meta.url);
  const candidates = [
    join(dirname(require.resolve("opencode-linux-x64/package.json")), "bin", "opencode"),
    join(ROOT, "node_modules", "opencode-linux-x64", "bin", "opencode"),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error("the opencode binary from opencode-ai is not installed (npm ci installs it)");
  return found;
}

export interface RunningProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first stdout line that parses as JSON and has this key. */
  waitFor(key: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  stderr(): string;
}

export function startProcess(runtime: "node" | "bun", script: string, env: Record<string, string>): RunningProcess {
  const path = join(here, script);
  const child =
    runtime === "node"
      ? spawn(process.execPath, ["--import", "tsx", path], {
          cwd: ROOT,
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        })
      : spawn(opencodeBinary(), [path], {
          cwd: ROOT,
          env: { ...process.env, ...env, BUN_BE_BUN: "1" },
          stdio: ["ignore", "pipe", "pipe"],
        });
  const lines: string[] = [];
  let err = "";
  let buffer = "";
  const waiters: Array<() => void> = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let index: number;
    while ((index = buffer.indexOf("\n")) >= 0) {
      lines.push(buffer.slice(0, index));
      buffer = buffer.slice(index + 1);
    }
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  // Its output is complete only once its streams have closed: "exit" can come before the last lines are read.
  let closed = false;
  child.on("close", () => {
    closed = true;
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const find = (key: string) => {
    for (const line of lines) {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (key in parsed) return parsed;
      } catch {
        // not one of our lines
      }
    }
    return undefined;
  };
  return {
    child,
    lines,
    exited,
    stderr: () => err,
    waitFor: (key, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no "${key}" line within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`)),
          timeoutMs,
        );
        const check = () => {
          const found = find(key);
          if (found) {
            clearTimeout(timer);
            resolve(found);
            return;
          }
          if (closed) {
            clearTimeout(timer);
            reject(new Error(`process exited (${child.exitCode}) before "${key}"; stderr: ${err.slice(-2000)}`));
            return;
          }
          waiters.push(check);
        };
        check();
      }),
  };
}
