// The command channel: a program run without a shell, the notice as JSON on its stdin and its kind in the environment;
// what its exit, its absence and its slowness mean.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NOTICE_KINDS } from "../../src/core/notices.js";
import { parseChannels } from "../../src/notices/channels.js";
import { deliverNotice } from "../../src/notices/deliver.js";
import type { CommandChannel } from "../../src/notices/types.js";
import { tempFolder } from "../support/temp-folders.js";
import { fullNotice, sampleNotice } from "./sample-notice.js";

const sh = (script: string, ...rest: string[]): CommandChannel => ({
  type: "command",
  name: "c",
  command: "/bin/sh",
  args: ["-c", script, "sh", ...rest],
  kinds: [...NOTICE_KINDS],
  timeoutMs: 5000,
});

describe("the command channel", () => {
  it("gives the program the notice as JSON on stdin and its kind in TODO_CONTINUATION_NOTICE_KIND", async () => {
    const folder = tempFolder();
    const stdin = join(folder, "notice.json");
    const kind = join(folder, "kind");
    const notice = fullNotice();
    const channel = sh('cat > "$1"; printf %s "$TODO_CONTINUATION_NOTICE_KIND" > "$2"', stdin, kind);
    expect(parseChannels([channel]).problems).toEqual([]);
    expect(await deliverNotice(channel, notice)).toEqual({ ok: true });
    expect(JSON.parse(readFileSync(stdin, "utf8"))).toEqual(notice);
    expect(readFileSync(kind, "utf8")).toBe("question");
  });

  it("reports a failing program's exit code and the first line of its stderr, worth another try", async () => {
    const result = await deliverNotice(
      sh('cat >/dev/null; echo "  display not found  " >&2; echo more >&2; exit 3'),
      sampleNotice(),
    );
    expect(result).toEqual({
      ok: false,
      retryable: true,
      error: "/bin/sh exited with code 3: display not found",
    });
  });

  it("trims a long stderr line to 200 characters", async () => {
    const result = await deliverNotice(sh(`printf '%0300d' 0 >&2; exit 1`), sampleNotice());
    expect(result.ok).toBe(false);
    const error = (result as { error: string }).error;
    expect(error.startsWith("/bin/sh exited with code 1: 000")).toBe(true);
    expect(error.length).toBe("/bin/sh exited with code 1: ".length + 200);
  });

  it("does not hang on a program that never reads its stdin", async () => {
    expect(await deliverNotice(sh("exit 0"), { ...sampleNotice(), text: "x".repeat(1 << 20) })).toEqual({ ok: true });
  });

  it("is not worth another try when the program is gone or not executable", async () => {
    const gone = { ...sh(""), command: join(tempFolder(), "gone"), args: [] };
    expect(await deliverNotice(gone, sampleNotice())).toEqual({
      ok: false,
      retryable: false,
      error: `${gone.command} could not start: not found (ENOENT)`,
    });
    const folder = tempFolder();
    expect(await deliverNotice({ ...gone, command: folder }, sampleNotice())).toMatchObject({
      ok: false,
      retryable: false,
      error: expect.stringContaining("(EACCES)"),
    });
  });

  it("kills a program that outlives the timeout, with what it started, worth another try", async () => {
    const folder = tempFolder();
    const pidFile = join(folder, "pid");
    const result = await deliverNotice(
      { ...sh('sleep 30 & echo $! > "$1"; wait', pidFile), timeoutMs: 300 },
      sampleNotice(),
    );
    expect(result).toEqual({ ok: false, retryable: true, error: "/bin/sh did not finish within 300 ms" });
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    const alive = () => {
      try {
        process.kill(sleeper, 0);
        return true;
      } catch {
        return false;
      }
    };
    await expect.poll(alive, { timeout: 5000 }).toBe(false);
  });
});
