// What the plugin must log when its PostgreSQL server cannot be reached, under Node and under OpenCode's Bun alike.
import { expect } from "vitest";
import type { FakeHost } from "../../support/fake-host.js";

/** One "paused" line, short, naming the address and why, never SQL, parameters or the password. */
export function expectShortLineSayingWhy(logs: FakeHost["logs"]): void {
  const paused = logs.filter((l) => l.message.includes("paused"));
  expect(paused).toHaveLength(1);
  const line = paused[0]!.message;
  expect(line).toMatch(/nothing answers at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\)/);
  expect(line.length).toBeLessThan(300);
  expect(line).not.toMatch(/select|insert|update|params|Failed query/i);
  expect(JSON.stringify(logs)).not.toContain("s3cret");
}
