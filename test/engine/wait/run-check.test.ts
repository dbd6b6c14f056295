// runCheck promises: the command runs under /bin/sh in the folder given with no input, its exit status and the last
// of its output (stdout and stderr as they came) come back; one that runs past its time limit is killed with
// everything it started; one that cannot start says why. Real processes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_OUTPUT_CHARS, runCheck } from "../../../src/engine/wait/run-check.js";

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
    const result = await runCheck("sleep 30 & echo started; wait", folder, 300);
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    expect(result.output).toMatch(/^started\n\n\(stopped after 0 s\)$/);
  });

  it("says why a check could not run", async () => {
    const result = await runCheck("true", join(folder, "no-such-folder"));
    expect(result).toMatchObject({ exitCode: null, timedOut: false });
    expect(result.output).toMatch(/^the check could not run: .*ENOENT/);
  });
});
