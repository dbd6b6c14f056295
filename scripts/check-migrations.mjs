#!/usr/bin/env node
// Fails when src/store/schema.ts and migrations/ disagree: runs `drizzle-kit generate` against a copy of the
// committed migrations and checks that it has nothing to add.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

// drizzle-kit resolves --out relative to the working directory (it prefixes "./"), so the copy lives in .tmp/.
mkdirSync(".tmp", { recursive: true });
const copy = relative(process.cwd(), mkdtempSync(join(".tmp", "migrations-check-")));
try {
  cpSync("migrations", copy, { recursive: true });
  const before = readdirSync(copy).sort();
  let output;
  try {
    output = execFileSync(
      process.execPath,
      [
        "node_modules/drizzle-kit/bin.cjs",
        "generate",
        "--dialect",
        "sqlite",
        "--schema",
        "./src/store/schema.ts",
        "--out",
        copy,
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
  } catch (error) {
    console.error(`drizzle-kit generate failed: ${error.stderr || error.message}`);
    process.exitCode = 1;
  }
  // drizzle-kit exits 0 even when it fails to read the folder: an error on its output is a failure too.
  if (output !== undefined && /error/i.test(output)) {
    console.error(`drizzle-kit generate reported an error:\n${output}`);
    process.exitCode = 1;
  }
  if (process.exitCode) throw new Error("drizzle-kit generate did not run cleanly");
  const after = readdirSync(copy).sort();
  const added = after.filter((f) => !before.includes(f));
  if (added.length > 0) {
    console.error(`schema and migrations disagree: drizzle-kit generate would add ${added.join(", ")}`);
    console.error("run `npm run db:generate` and commit the new migration");
    process.exitCode = 1;
  } else {
    console.log(
      `migrations match the schema (${before.filter((f) => f.endsWith(".sql")).length} migration files): ${output.trim().split("\n").at(-1)}`,
    );
  }
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
} finally {
  rmSync(copy, { recursive: true, force: true });
}
