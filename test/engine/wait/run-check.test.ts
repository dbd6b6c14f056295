// runCheck promises: the command runs under /bin/sh in the folder given with no input, its exit status and the last
// of its output (stdout and stderr as they came) come back; one that runs past its time limit, or whose caller aborts
// it or dies, is killed with everything it started; one that cannot start says why. Real processes.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_OUTPUT_CHARS, runCheck } from "../../../src/engine/wait/run-check.js";
import { waitFor } from "../../support/wait-for.js";
import { ROOT } from "../../crash/processes.js";

const folder = mkdtempSync(join(tmpdir(), "tc-run-check-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("runCheck", () => {
  it("runs in the folder with no input, and says how it exited and what it printed", async () => {
    writeFileSync(join(folder, "ready"), "");
    expect(await runCheck("test -f ready && echo ok && echo warn >&2", folder)).toEqual({
      exitCode: 0,
      output: "ok\nwarn\n",
      timedOut: false,
    });
    expect(await runCheck("cat; test -f missing", folder)).toEqual({ exitCode: 1, output: "", timedOut: false });
  });

  it("keeps only the last of a long output", async () => {
    const result = await runCheck(`yes line | head -n 5000; echo the-end`, folder);
    expect(result.output.length).toBe(MAX_OUTPUT_CHARS);
    expect(result.output.endsWith("line\nthe-end\n")).toBe(true);
  });

  it("kills a check past its time limit, with what it started", async () => {
    const result = await runCheck("sleep 30 & echo started; wait", folder, { timeoutMs: 300 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    expect(result.output).toMatch(/^started\n\n\(stopped after 0 s\)$/);
  });

  it("kills a check its caller aborts, with what it started, and says so", async () => {
    const abort = new AbortController();
    const pidFile = join(folder, "sleeper.pid");
    const running = runCheck(`sleep 30 & echo $! > ${pidFile}; wait`, folder, { signal: abort.signal });
    const pid = await waitFor("the check's child", () => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8")));
    abort.abort();
    expect(await running).toMatchObject({ exitCode: null, timedOut: false, aborted: true });
    // Killed, though perhaps not yet reaped by whoever inherited it: gone, or a zombie.
    const state = existsSync(`/proc/${pid}/stat`)
      ? readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0]
      : "gone";
    expect(["gone", "Z"]).toContain(state);
  });

  it("runs nothing when aborted before it starts", async () => {
    const abort = new AbortController();
    abort.abort();
    expect(await runCheck("touch ran", folder, { signal: abort.signal })).toMatchObject({ aborted: true });
    expect(existsSync(join(folder, "ran"))).toBe(false);
  });

  it("runs in this process's environment, with the variables it is given added", async () => {
    process.env.TC_RUN_CHECK_INHERITED = "inherited";
    const result = await runCheck('echo "$TC_RUN_CHECK_INHERITED $TC_RUN_CHECK_ADDED"', folder, {
      env: { TC_RUN_CHECK_ADDED: "added" },
    });
    delete process.env.TC_RUN_CHECK_INHERITED;
    expect(result.output).toBe("inherited added\n");
  });

  it("dies with the process that runs it, even one killed by SIGKILL, with what it started", async () => {
    const pidFile = join(folder, "orphan.pid");
    const runner = `import(${JSON.stringify(join(ROOT, "src/engine/wait/run-check.ts"))}).then((m) =>
      m.runCheck(${JSON.stringify(`sleep 30 & echo $! > ${pidFile}; wait`)}, ${JSON.stringify(folder)}))`;
    const parent = spawn(process.execPath, ["--import", "tsx", "-e", runner], { cwd: ROOT, stdio: "ignore" });
    const exited = new Promise((r) => parent.once("exit", r));
    const pid = await waitFor("the check's child", () => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8")), {
      timeoutMs: 20_000,
    });
    parent.kill("SIGKILL");
    await exited;
    await waitFor("the check's child to be killed", () => !existsSync(`/proc/${pid}`) || stateOf(pid) === "Z");
  });

  it("says why a check could not run", async () => {
    const result = await runCheck("true", join(folder, "no-such-folder"));
    expect(result).toMatchObject({ exitCode: null, timedOut: false });
    expect(result.output).toMatch(/^the check could not run: .*ENOENT/);
  });
});

/** A process's state letter ("S", "Z"…), or "gone". */
function stateOf(pid: number): string {
  const stat = `/proc/${pid}/stat`;
  return existsSync(stat) ? readFileSync(stat, "utf8").split(") ")[1]![0]! : "gone";
}
