// The built `todo-continuation` binary, run as a process: its exit code and output, in UTC.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../crash/processes.js";

export const CLI_BIN = join(ROOT, "dist", "cli", "main.js");
const exec = promisify(execFile);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Fails at once when the CLI is not built (npm test builds it before the tests). */
export function requireBuiltCli(): void {
  if (!existsSync(CLI_BIN)) throw new Error("the CLI is not built: run `npm run build` (npm test does)");
}

export async function cli(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI_BIN, ...args], {
      env: { ...process.env, ...env, TZ: "UTC" },
      cwd,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
