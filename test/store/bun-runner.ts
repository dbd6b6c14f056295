// Runs the storage cases under Bun (the Bun inside opencode-ai, with bun:sqlite) and prints one JSON line.
import { rmSync } from "node:fs";
import { caseFolder, STORE_CASES } from "./store-cases.js";

const results: Array<{ name: string; ok: boolean; error?: string }> = [];
for (const c of STORE_CASES) {
  const folder = caseFolder();
  try {
    await c.run(folder);
    results.push({ name: c.name, ok: true });
  } catch (error) {
    results.push({
      name: c.name,
      ok: false,
      error: error instanceof Error ? `${error.message}\n${error.stack}` : String(error),
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
process.stdout.write(`${JSON.stringify({ runtime: `bun ${process.versions.bun}`, results })}\n`);
