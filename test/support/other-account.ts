// When this process is root, some programs must run as another account: PostgreSQL refuses to run as root, and for
// root a file's permissions stop nothing, so the tests of an unwritable database run OpenCode as someone else. That
// account may not reach the checkout (a clone in root's home, mode 700): it gets copies of what it needs in a folder
// it can read. As any other user, tests run as that user and use the checkout in place.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Account {
  name: string;
  uid: number;
  gid: number;
}

export const RUNNING_AS_ROOT = process.getuid?.() === 0;

/** The account root runs programs as: `nobody`, which every Linux and macOS has. */
const ACCOUNT_NAME = "nobody";

function accountOf(name: string): Account {
  try {
    const id = (flag: string) => Number(execFileSync("id", [flag, name], { encoding: "utf8" }).trim());
    return { name, uid: id("-u"), gid: id("-g") };
  } catch (error) {
    throw new Error(
      `running as root, the tests need the unprivileged account "${name}", which this machine lacks: ${
        (error as Error).message
      }`,
    );
  }
}

/** The account to run a program as: `nobody` under root, else none (the program runs as this user). */
export function otherAccount(): Account | undefined {
  return RUNNING_AS_ROOT ? accountOf(ACCOUNT_NAME) : undefined;
}

/** The tree under `path` readable, and its folders enterable, by everyone (its parents are the shared root's). */
function openToAll(path: string): void {
  execFileSync("chmod", ["-R", "a+rX", path]);
}

/** The folder shared copies live in: the temporary folder is open to every account. */
function sharedRoot(): string {
  const root = join(tmpdir(), "tc-shared");
  mkdirSync(root, { recursive: true });
  chmodSync(root, 0o755);
  return root;
}

/**
 * `source` as the other account can reach it. Not root: `source` itself. Root: a copy, made once per `key` (a version
 * that names the content) and kept for later runs; copied to a temporary name and renamed, so that two runs at once
 * never see half a copy.
 */
export function reachableCopy(source: string, key: string): string {
  if (!RUNNING_AS_ROOT) return source;
  const target = join(sharedRoot(), key);
  if (existsSync(target)) return target;
  const staging = mkdtempSync(join(sharedRoot(), `${key}.staging-`));
  cpSync(source, join(staging, "copy"), { recursive: true, verbatimSymlinks: true });
  openToAll(staging);
  try {
    renameSync(join(staging, "copy"), target);
  } catch (error) {
    if (!existsSync(target)) throw error;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

/**
 * What the plugin needs at run time, from the checkout at `root`, where the other account can reach it: the sources,
 * the build, the migrations and the production dependencies (as the lockfile lists them). Not root: the checkout
 * itself. Root: a fresh copy (the sources change between runs), removed by `dispose`.
 */
export function reachableCheckout(root: string): { root: string; dispose(): void } {
  if (!RUNNING_AS_ROOT) return { root, dispose: () => undefined };
  const folder = mkdtempSync(join(sharedRoot(), "checkout-"));
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  const dependencies = Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith("node_modules/") && !entry.dev && !entry.devOptional)
    .map(([path]) => path)
    .filter((path) => existsSync(join(root, path)));
  for (const relative of ["package.json", "src", "dist", "migrations", "migrations-pg", ...dependencies])
    cpSync(join(root, relative), join(folder, relative), { recursive: true, verbatimSymlinks: true });
  openToAll(folder);
  return { root: folder, dispose: () => rmSync(folder, { recursive: true, force: true }) };
}
