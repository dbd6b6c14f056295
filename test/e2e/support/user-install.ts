// What a user types to install the package (`git clone`, `npm install`, `npm run build`, `npm install <tarball>`),
// run offline: npm takes what it needs from this machine's npm cache, which this checkout's `npm install` filled.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../../crash/processes.js";
import { tempFolder } from "../../support/temp-folders.js";

export const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = promisify(execFile);

/** npm's settings for OpenCode's installer and ours: this machine's npm cache, preferred to the registry. */
export function npmCacheEnv(): Record<string, string> {
  return {
    npm_config_cache: execFileSync(npm, ["config", "get", "cache"], { encoding: "utf8" }).trim(),
    npm_config_prefer_offline: "true",
  };
}

/**
 * better-sqlite3's install script (`prebuild-install || node-gyp rebuild`) downloads a prebuilt binary from GitHub on
 * a connected machine, and compiles SQLite when it cannot: a minute of both cores here, where GitHub is out of reach.
 * The binary this checkout's own install made is offered where prebuild-install looks first, a local prebuilds folder
 * (its `npm_config_<package>_local_prebuilds` setting), so the script does what it does for a connected user: unpack
 * a prebuilt binary. A version or platform the checkout did not build is not there, and that install compiles.
 */
function offerPrebuild(folder: string): Record<string, string> {
  const pkg = join(ROOT, "node_modules", "better-sqlite3");
  const binary = join("build", "Release", "better_sqlite3.node");
  if (!existsSync(join(pkg, binary))) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const prebuilds = join(folder, "prebuilds");
  mkdirSync(prebuilds, { recursive: true });
  execFileSync("tar", ["-czf", join(prebuilds, name), "-C", pkg, binary]);
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds };
}

/** A user's shell, in a temporary folder of its own: git and npm as typed, install scripts and all. */
export class UserShell {
  readonly folder = tempFolder("tc-user-");
  readonly env: Record<string, string> = {
    ...npmCacheEnv(),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    ...offerPrebuild(this.folder),
  };

  /** Runs a command in `cwd`; rejects with its output when it fails. */
  async run(cwd: string, command: string, ...args: string[]): Promise<string> {
    try {
      const { stdout } = await run(command, args, {
        cwd,
        env: { ...process.env, ...this.env },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 300_000,
      });
      return stdout;
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`\`${[command, ...args].join(" ")}\` failed in ${cwd}:\n${stdout ?? ""}\n${stderr ?? ""}`, {
        cause: error,
      });
    }
  }

  npm(cwd: string, ...args: string[]): Promise<string> {
    return this.run(cwd, npm, ...args);
  }

  git(cwd: string, ...args: string[]): Promise<string> {
    return this.run(cwd, "git", ...args);
  }

  /**
   * A clone of the repository this test runs from, at its committed HEAD: what a user who clones gets (changes not
   * committed are not in it).
   */
  async cloneHead(): Promise<string> {
    const head = (await this.git(ROOT, "rev-parse", "HEAD")).trim();
    const clone = join(this.folder, "opencode-todo-continuation");
    await this.git(this.folder, "clone", "--quiet", "--no-checkout", ROOT, clone);
    await this.git(clone, "checkout", "--quiet", "--detach", head);
    return clone;
  }
}
