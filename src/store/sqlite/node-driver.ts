// better-sqlite3, the SQLite driver under Node, is an optional dependency with a native part: when its build fails npm
// removes it and still exits 0, and with --ignore-scripts (or after a change of Node) it is there but does not load.
// Every Node entry point that opens a SQLite file loads it here, so that each of those cases is said in one message:
// what is missing, why, and the command that brings it back where this package is installed.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

export type BetterSqlite = typeof import("better-sqlite3");

/** The folder of this package: three up from src/store/sqlite/ and from dist/store/sqlite/ alike. */
const PACKAGE_ROOT = fileURLToPath(new URL("../../../", import.meta.url)).replace(/[\\/]$/, "");

/** better-sqlite3 cannot be used in this process; the message says why and what to run. */
export class SqliteDriverMissingError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = "SqliteDriverMissingError";
  }
}

/** How the driver is missing, and where: what the message is built from. */
export type DriverProblem =
  { kind: "not-installed"; packageRoot: string } | { kind: "does-not-load"; driverFolder: string; cause: string };

const WHAT = "better-sqlite3, the SQLite driver under Node,";

/** The one message for a missing driver: what, why, and the one command that fixes it in this situation. */
export function driverMissingMessage(problem: DriverProblem, nodeVersion = process.version): string {
  if (problem.kind === "does-not-load") {
    return (
      `${WHAT} is in ${problem.driverFolder} but its native part does not load (${problem.cause}): its build failed, ` +
      `was skipped (--ignore-scripts) or was made for another Node than ${nodeVersion}. To build it and see the ` +
      `build's output, run in ${installFolderOf(problem.driverFolder) ?? dirname(problem.driverFolder)}: ` +
      `npm rebuild better-sqlite3 --foreground-scripts`
    );
  }
  const why =
    `${WHAT} is not installed: npm drops this optional dependency without a word when its native build fails ` +
    `(where no prebuilt binary can be downloaded, the build needs python3, make, g++ and Node's headers).`;
  const project = installFolderOf(problem.packageRoot);
  if (project === undefined)
    return `${why} To build it again and see the build's output, run in ${problem.packageRoot}: npm install --foreground-scripts`;
  if (existsSync(join(project, "package.json")))
    return `${why} To install it again and see the build's output, run in ${project}: npm install --foreground-scripts`;
  return `${why} Install opencode-todo-continuation again the way you installed it, adding --foreground-scripts to see the build's output (e.g. npm install -g --foreground-scripts <the package or tarball>).`;
}

/** The project whose node_modules holds `folder` (undefined when it is not inside one: a clone). */
function installFolderOf(folder: string): string | undefined {
  const at = folder.lastIndexOf(`${sep}node_modules${sep}`);
  return at < 0 ? undefined : folder.slice(0, at);
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0]!;

/** The folder better-sqlite3 was found in, as Node resolves it from this package. */
function driverFolder(): string {
  try {
    const entry = createRequire(import.meta.url).resolve("better-sqlite3");
    return entry.slice(0, entry.lastIndexOf(`${sep}better-sqlite3${sep}`)) + `${sep}better-sqlite3`;
  } catch {
    return join(PACKAGE_ROOT, "node_modules", "better-sqlite3");
  }
}

/**
 * The driver, its native part loaded (better-sqlite3 loads it at the first open, so an in-memory database is opened
 * and closed here); a SqliteDriverMissingError otherwise.
 */
export async function loadBetterSqlite(): Promise<BetterSqlite> {
  let driver: BetterSqlite;
  try {
    driver = (await import("better-sqlite3")).default;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem: DriverProblem =
      code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND"
        ? { kind: "not-installed", packageRoot: PACKAGE_ROOT }
        : { kind: "does-not-load", driverFolder: driverFolder(), cause: firstLine(error) };
    throw new SqliteDriverMissingError(driverMissingMessage(problem), error);
  }
  try {
    new driver(":memory:").close();
  } catch (error) {
    const problem: DriverProblem = { kind: "does-not-load", driverFolder: driverFolder(), cause: firstLine(error) };
    throw new SqliteDriverMissingError(driverMissingMessage(problem), error);
  }
  return driver;
}
