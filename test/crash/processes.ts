// Starting engine processes under Node (the runner built once with esbuild) or under the Bun that ships inside
// opencode-ai (which runs TypeScript itself).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(here, "..", "..");

/**
 * The opencode binary of the opencode-ai devDependency: its install step puts this platform's build at bin/opencode.exe
 * (whatever the platform); without that step, the platform's own package holds it. The Bun that hosts OpenCode's
 * plugins is this binary too, run with BUN_BE_BUN=1.
 */
export function opencodeBinary(): string {
  const require = createRequire(import.meta.url);
  const os = { darwin: "darwin", linux: "linux", win32: "windows" }[process.platform as string] ?? process.platform;
  const candidates: string[] = [];
  const packaged = (name: string, ...path: string[]) => {
    try {
      candidates.push(join(dirname(require.resolve(`${name}/package.json`)), ...path));
    } catch {
      // not installed
    }
  };
  packaged("opencode-ai", "bin", "opencode.exe");
  for (const variant of ["", "-baseline"]) packaged(`opencode-${os}-${process.arch}${variant}`, "bin", "opencode");
  const found = candidates.find((c) => existsSync(c) && statSync(c).size > 1_000_000);
  if (!found)
    throw new Error(
      `OpenCode's binary for ${os}-${process.arch} is not installed: it comes with the devDependency opencode-ai ` +
        "(`npm install`), from a package npm picks by platform, which the registry may not serve for this one",
    );
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

/**
 * Where Node runners are built to: three folders below the checkout, as the sources are (src/store/sqlite/open.ts), so
 * that the migrations found relative to the module are the checkout's, and its node_modules resolve the packages.
 */
const RUNNERS = join(ROOT, ".tmp", "runners", "node");
const built = new Map<string, string>();

/**
 * `path` and what it imports from the project bundled into one module, the packages left to node_modules: a process
 * starts in a quarter of the time tsx takes to compile it at every start (the crash suite starts hundreds). Named by
 * its content, written whole under a temporary name first: test processes building the same runner at once agree.
 */
function builtRunner(path: string): string {
  const known = built.get(path);
  if (known) return known;
  const [output] = buildSync({
    entryPoints: [path],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    write: false,
    logLevel: "error",
  }).outputFiles;
  const hash = createHash("sha256").update(output!.contents).digest("hex").slice(0, 12);
  const file = join(RUNNERS, `${basename(path, ".ts")}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(RUNNERS, { recursive: true });
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, output!.contents);
    renameSync(staging, file);
  }
  built.set(path, file);
  return file;
}

export function startProcess(runtime: "node" | "bun", script: string, env: Record<string, string>): RunningProcess {
  const path = join(here, script);
  const child =
    runtime === "node"
      ? spawn(process.execPath, [builtRunner(path)], {
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
