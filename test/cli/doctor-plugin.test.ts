// `todo-continuation doctor` on the plugin of a project: what the real plugin function wrote at its start (on, off and
// why, each option's source), the config files as they are now, and a database that is not there said with its cause;
// and every command finds the database a config file names.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { TodoContinuation, type TodoContinuationHooks } from "../../src/plugin/plugin.js";
import { FakeHost } from "../support/fake-host.js";
import { fakeSdkClient } from "../support/fake-sdk-client.js";
import { projectFolder } from "../support/project-folder.js";
import { tempFolder } from "../support/temp-folders.js";
import { cli, requireBuiltCli } from "../support/cli.js";

let hooks: TodoContinuationHooks | undefined;
beforeAll(requireBuiltCli);
afterEach(async () => {
  await hooks?.dispose();
  hooks = undefined;
});

async function pluginStarted(directory: string, options: Record<string, unknown>): Promise<void> {
  const host = new FakeHost();
  const input = { client: fakeSdkClient(host), directory, worktree: directory, project: { id: "p" } };
  hooks = await TodoContinuation(input as never, options);
  await hooks.dispose();
}

describe("doctor on the plugin", () => {
  it("a plugin that is off: each problem on a FAIL line, the database's absence explained, exit 1", async () => {
    const directory = projectFolder({ countdownSecs: 3 });
    await pluginStarted(directory, { maxContinuations: 0, databasePath: "state/todo.db" });
    const { code, stdout } = await cli(["doctor"], {}, directory);
    expect(code).toBe(1);
    const file = join(directory, ".opencode", "todo-continuation.json");
    expect(stdout).toMatch(
      new RegExp(
        `FAIL\\s+plugin\\s+off \\(0\\.1\\.0, started .* by process ${process.pid}\\): invalid configuration: in ${file}: countdownSecs = 3; allowed: a known option \\(did you mean countdownSeconds\\?\\)`,
      ),
    );
    expect(stdout).toMatch(
      /FAIL\s+plugin\s+off .*: invalid configuration: maxContinuations = 0; allowed: an integer from 1 to 100000/,
    );
    expect(stdout).toMatch(new RegExp(`FAIL\\s+config file\\s+in ${file}: countdownSecs = 3`));
    expect(stdout).toMatch(
      /FAIL\s+database\s+no database at .*: the plugin is off or in memory \(see the plugin line\), so it created nothing/,
    );
  });

  it("a plugin that runs: OK, and the options not at their default with their source; the CLI uses the file's database", async () => {
    const directory = projectFolder({ databasePath: "state/todo.db", maxContinuations: 5 });
    await pluginStarted(directory, { toast: false });
    const file = join(directory, ".opencode", "todo-continuation.json");
    const { code, stdout } = await cli(["doctor"], {}, directory);
    expect(stdout).toMatch(/OK\s+plugin\s+on \(0\.1\.0, started /);
    expect(stdout).toMatch(new RegExp(`OK\\s+config file\\s+${file}`));
    expect(stdout).toContain(`database   ${join(directory, "state", "todo.db")}`);
    expect(stdout).toMatch(new RegExp(`maxContinuations\\s+5\\s+${file}`));
    expect(stdout).toMatch(/toast\s+false\s+plugin options/);
    expect(code).toBe(0);
    const json = JSON.parse((await cli(["doctor", "--json"], {}, directory)).stdout) as {
      plugin: { status: { state: string; options: Record<string, { source: string }> }; config_files: string[] };
    };
    expect(json.plugin.status.state).toBe("on");
    expect(json.plugin.status.options.maxContinuations!.source).toBe(file);
    expect(json.plugin.config_files).toEqual([file]);
    // history reads the same file without --db.
    expect((await cli(["history"], {}, directory)).code).toBe(0);
  });

  it("a verify command: the command that would run, the file it came from, and that it runs with your rights", async () => {
    const directory = projectFolder({ databasePath: "t.db", verify: { command: "npm test", timeoutSeconds: 300 } });
    const file = join(directory, ".opencode", "todo-continuation.json");
    // Before any plugin ran, from the file as it is; after, as the plugin said.
    const before = (await cli(["doctor"], {}, directory)).stdout;
    await pluginStarted(directory, {});
    const after = (await cli(["doctor"], {}, directory)).stdout;
    for (const stdout of [before, after])
      expect(stdout).toMatch(
        new RegExp(
          `OK\\s+verify\\s+a finished list is checked by "npm test" \\(from ${file}\\), run in the session's folder with your rights, killed after 300 s`,
        ),
      );
    const unset = projectFolder({ databasePath: "t.db" });
    expect((await cli(["doctor"], {}, unset)).stdout).not.toMatch(/\bverify\b/);
  });

  it("options spelt out at their default values are not listed as not at their default", async () => {
    const directory = projectFolder({ countdownSeconds: 2, skipAgents: ["plan", "compaction"], databasePath: "t.db" });
    await pluginStarted(directory, { maxContinuations: 20, toast: true, stagnationLimit: 5 });
    const { code, stdout } = await cli(["doctor"], {}, directory);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Options not at their default/);
    expect(stdout).toMatch(/^\s*stagnationLimit\s+5\s+plugin options$/m);
    for (const option of ["countdownSeconds", "skipAgents", "maxContinuations", "toast"])
      expect(stdout).not.toMatch(new RegExp(`^\\s*${option}\\s`, "m"));
  });

  it("the files as they are now: a .json beside the .jsonc named as ignored, a string for a switch refused", async () => {
    const directory = projectFolder({ countdownSeconds: 3 });
    await pluginStarted(directory, { databasePath: "t.db" });
    // Written after the plugin's start: only doctor's look at the files can tell.
    const json = join(directory, ".opencode", "todo-continuation.json");
    const jsonc = join(directory, ".opencode", "todo-continuation.jsonc");
    writeFileSync(jsonc, '{ "toast": "yes" }');
    const { code, stdout } = await cli(["doctor"], {}, directory);
    expect(stdout).toMatch(new RegExp(`FAIL\\s+config file\\s+in ${jsonc}: toast = "yes"; allowed: true or false`));
    expect(stdout).toMatch(new RegExp(`WARN\\s+config file\\s+${json} is ignored: ${jsonc} is read instead`));
    expect(stdout).not.toMatch(/OK\s+config file/);
    expect(code).toBe(1);
  });

  it("no plugin ever ran in the project: said, with where a load failure is logged; --directory looks elsewhere", async () => {
    const elsewhere = projectFolder();
    const { stdout } = await cli(["doctor", "--directory", elsewhere], {}, tempFolder());
    expect(stdout).toMatch(new RegExp(`WARN\\s+plugin\\s+no OpenCode has loaded the plugin in ${elsewhere} yet`));
    expect(stdout).toContain("OpenCode's log (~/.local/share/opencode/log/)");
    // OpenCode logs only a plugin function that throws; one it cannot find or import is an error toast in its TUI.
    expect(stdout).toContain('an error toast of its TUI ("Failed to load plugin …"), not in its log');
    expect(stdout).toMatch(/FAIL\s+database\s+no database at .*: no plugin has run here yet/);
  });
});
