// What the host adapter reads from OpenCode 1.18.33's message parts about the files a turn touched. The parts are
// shaped as that version sends them (SessionProcessor.completeToolCall; the write, edit and apply_patch tools'
// metadata; the `patch` part a step leaves when snapshots are on).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inspectMessages } from "../../src/core/messages.js";
import { contentHash, textHash } from "../../src/host/content-hash.js";
import { normalizeMessage } from "../../src/host/opencode-host.js";
import { partFiles } from "../../src/host/turn-files.js";
import { hashFiles, LARGEST_HASHED_FILE } from "../../src/host/workspace.js";

const DIR = "/work/project";
const completed = (tool: string, input: object, metadata: object) => ({
  id: "prt_1",
  type: "tool",
  tool,
  callID: "call_1",
  state: { status: "completed", input, output: "", metadata, title: "", time: { start: 1, end: 2 } },
});

describe("the files a part says it touched", () => {
  it("write: the path OpenCode resolved, the content's hash, and a file that did not exist before", () => {
    const part = completed(
      "write",
      { filePath: "src/a.ts", content: "export const a = 1;\n" },
      { diagnostics: {}, filepath: `${DIR}/src/a.ts`, exists: false },
    );
    expect(partFiles(part, DIR)).toEqual([
      { path: `${DIR}/src/a.ts`, after: textHash("export const a = 1;\n"), before: null },
    ]);
    const overwrite = completed("write", { filePath: "src/a.ts", content: "x" }, { exists: true });
    expect(partFiles(overwrite, DIR)).toEqual([{ path: `${DIR}/src/a.ts`, after: textHash("x") }]);
  });

  it("edit: no content, only whether lines changed", () => {
    const part = completed(
      "edit",
      { filePath: `${DIR}/b.ts`, oldString: "1", newString: "2" },
      { diff: "…", filediff: { file: `${DIR}/b.ts`, patch: "…", additions: 1, deletions: 1 } },
    );
    expect(partFiles(part, DIR)).toEqual([{ path: `${DIR}/b.ts`, changed: true }]);
    const none = completed("edit", { filePath: "b.ts" }, { filediff: { additions: 0, deletions: 0 } });
    expect(partFiles(none, DIR)).toEqual([{ path: `${DIR}/b.ts`, changed: false }]);
  });

  it("apply_patch: every file it added, updated, moved or deleted", () => {
    const part = completed(
      "apply_patch",
      { patchText: "*** Begin Patch…" },
      {
        files: [
          { filePath: `${DIR}/new.ts`, relativePath: "new.ts", type: "add", additions: 3, deletions: 0 },
          { filePath: `${DIR}/old.ts`, relativePath: "old.ts", type: "delete", additions: 0, deletions: 9 },
          { filePath: `${DIR}/mid.ts`, relativePath: "mid.ts", type: "update", additions: 1, deletions: 1 },
          { filePath: `${DIR}/from.ts`, type: "move", movePath: `${DIR}/to.ts`, additions: 0, deletions: 0 },
        ],
      },
    );
    expect(partFiles(part, DIR)).toEqual([
      { path: `${DIR}/new.ts`, before: null },
      { path: `${DIR}/old.ts`, after: null },
      { path: `${DIR}/mid.ts`, changed: true },
      { path: `${DIR}/from.ts`, after: null },
      { path: `${DIR}/to.ts` },
    ]);
  });

  it("a patch part (snapshots on): every absolute path the step changed, bash's included", () => {
    const part = { id: "prt_2", type: "patch", hash: "4b825dc", files: [`${DIR}/gen.txt`, "relative/ignored"] };
    expect(partFiles(part, DIR)).toEqual([{ path: `${DIR}/gen.txt` }]);
  });

  it("nothing from tools still running or failed, from reads, from bash, or from text", () => {
    const running = { ...completed("write", { filePath: "a", content: "x" }, {}), state: { status: "running" } };
    const failed = { ...completed("write", { filePath: "a", content: "x" }, {}), state: { status: "error" } };
    for (const part of [
      running,
      failed,
      completed("read", { filePath: `${DIR}/a` }, {}),
      completed("bash", { command: "sed -i s/a/b/ a" }, {}),
      { type: "text", text: "I wrote a.ts" },
    ])
      expect(partFiles(part, DIR)).toBeUndefined();
  });
});

describe("the latest turn's files, as the guards see them", () => {
  const message = (id: string, role: string, parts: object[]) =>
    normalizeMessage({ info: { id, sessionID: "ses_1", role, time: { created: 1 } }, parts }, DIR)!;
  const wrote = (path: string, content: string) => completed("write", { filePath: path, content }, { exists: true });

  it("only the replies to the last user message; `own` when that message is one of ours", () => {
    const messages = [
      message("msg_1", "user", [{ type: "text", text: "build it" }]),
      message("msg_2", "assistant", [wrote("old.ts", "1")]),
      message("msg_3", "user", [{ type: "text", text: "go on" }]),
      message("msg_4", "assistant", [wrote("a.ts", "1"), { type: "step-finish" }]),
      message("msg_5", "assistant", [wrote("a.ts", "2"), wrote("b.ts", "3")]),
    ];
    expect(inspectMessages(messages).turnFiles).toEqual({
      answers: "other",
      files: [
        { path: `${DIR}/a.ts`, after: textHash("2") },
        { path: `${DIR}/b.ts`, after: textHash("3") },
      ],
    });
    const ours = new Map([["msg_3", "inj_1"]]);
    expect(inspectMessages(messages, { ours: { get: (id) => ours.get(id) } }).turnFiles?.answers).toBe("own");
  });

  it("an edit after a write: what the write gave is no longer known; a turn that touched nothing has no files", () => {
    const messages = [
      message("msg_1", "user", [{ type: "text", text: "go" }]),
      message("msg_2", "assistant", [
        { ...completed("write", { filePath: "a.ts", content: "1" }, { exists: false }) },
        completed("edit", { filePath: "a.ts" }, { filediff: { additions: 1, deletions: 0 } }),
      ]),
    ];
    expect(inspectMessages(messages).turnFiles?.files).toEqual([{ path: `${DIR}/a.ts`, before: null, changed: true }]);
    expect(inspectMessages([messages[0]!]).turnFiles).toBeUndefined();
  });
});

describe("the files on disk", () => {
  const dir = mkdtempSync(join(tmpdir(), "tc-workspace-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("hashes text as a write's content hashes (BOM and CRLF aside); binary byte for byte; gone is null", async () => {
    writeFileSync(join(dir, "a.txt"), "\uFEFFline 1\r\nline 2\n");
    writeFileSync(join(dir, "bin"), Buffer.from([1, 0, 2]));
    mkdirSync(join(dir, "folder"));
    writeFileSync(join(dir, "large"), Buffer.alloc(LARGEST_HASHED_FILE + 1, 97));
    const paths = ["a.txt", "bin", "missing", "folder", "large", "a.txt/under-a-file"].map((p) => join(dir, p));
    const hashes = await hashFiles(paths, new AbortController().signal);
    expect(hashes).toEqual({
      [join(dir, "a.txt")]: textHash("line 1\nline 2\n"),
      [join(dir, "bin")]: contentHash(Buffer.from([1, 0, 2])),
      [join(dir, "missing")]: null,
      [join(dir, "a.txt/under-a-file")]: null,
    });
    expect(hashes[join(dir, "bin")]).toMatch(/^b:/);
  });

  it("stops when the look gives up", async () => {
    const aborted = AbortSignal.abort(new Error("timed out"));
    await expect(hashFiles([join(dir, "a.txt")], aborted)).rejects.toThrow("timed out");
  });
});
