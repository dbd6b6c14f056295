#!/usr/bin/env node
// Fails when a schema and its migrations disagree (src/store/schema.ts with migrations/ for SQLite, src/store/pg/schema.ts
// with migrations-pg/ for PostgreSQL): runs `drizzle-kit generate` against a copy of the committed migrations and
// checks that it has nothing to add.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const TARGETS = [
  { dialect: "sqlite", schema: "./src/store/schema.ts", folder: "migrations", generate: "npm run db:generate" },
  {
    dialect: "postgresql",
    schema: "./src/store/pg/schema.ts",
    folder: "migrations-pg",
    generate: "npm run db:generate:pg",
  },
];

// drizzle-kit resolves --out relative to the working directory (it prefixes "./"), so the copy lives in .tmp/.
mkdirSync(".tmp", { recursive: true });
for (const target of TARGETS) check(target);

function check({ dialect, schema, folder, generate }) {
  const copy = relative(process.cwd(), mkdtempSync(join(".tmp", "migrations-check-")));
  try {
    cpSync(folder, copy, { recursive: true });
    const before = readdirSync(copy).sort();
    let output;
    try {
      output = execFileSync(
        process.execPath,
        ["node_modules/drizzle-kit/bin.cjs", "generate", "--dialect", dialect, "--schema", schema, "--out", copy],
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
      console.error(`${schema} and ${folder}/ disagree: drizzle-kit generate would add ${added.join(", ")}`);
      console.error(`run \`${generate}\` and commit the new migration`);
      process.exitCode = 1;
    } else {
      console.log(
        `${folder}/ matches ${schema} (${before.filter((f) => f.endsWith(".sql")).length} migration files): ${output.trim().split("\n").at(-1)}`,
      );
    }
  } catch (error) {
    console.error(error.message);
    process.exitCode = 1;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
