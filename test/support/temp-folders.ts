// Temporary folders for tests, removed after each test file (test/support/remove-temp-folders.ts, a setup file): a
// folder a test forgot, or could not remove because it failed first, does not outlive its file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = new Set<string>();

export function tempFolder(prefix = "tc-"): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  made.add(folder);
  return folder;
}

/** Removes every folder `tempFolder` made in this test file. */
export function removeTempFolders(): void {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
  made.clear();
}
