// The plugin's line for an unreachable PostgreSQL server inside OpenCode's Bun, whose client says only "Connection
// closed": plugin-database-runner.ts runs the real plugin function there (plugin-database.test.ts has it under Node).
import { describe, expect, it } from "vitest";
import { startProcess } from "../../crash/processes.js";
import type { FakeHost } from "../../support/fake-host.js";
import { expectShortLineSayingWhy } from "./unreachable-server-line.js";

describe("a PostgreSQL server that nothing answers for", () => {
  it("is said in one short line naming why inside OpenCode's Bun, whose client says only 'Connection closed'", async () => {
    const bun = startProcess("bun", "../engine/scenarios/plugin-database-runner.ts", {
      DATABASE_URL: "postgres://u:s3cret@127.0.0.1:1/db",
    });
    const line = (await bun.waitFor("logs", 30_000)) as { runtime: string; logs: FakeHost["logs"] };
    expect(line.runtime).toBe("bun");
    expectShortLineSayingWhy(line.logs);
  });
});
