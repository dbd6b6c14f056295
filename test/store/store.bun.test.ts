// The store's cases (store-cases.ts) under OpenCode's Bun, on bun:sqlite, run by bun-runner.ts.
import { describe, expect, it } from "vitest";
import { startProcess } from "../crash/processes.js";
import { STORE_CASES } from "./store-cases.js";

describe("store under OpenCode's Bun (bun:sqlite)", () => {
  it("passes the same cases", { timeout: 60_000 }, async () => {
    const bun = startProcess("bun", "../store/bun-runner.ts", {});
    const line = (await bun.waitFor("results", 50_000)) as {
      runtime: string;
      results: Array<{ name: string; ok: boolean; error?: string }>;
    };
    expect(line.runtime).toMatch(/^bun 1\./);
    expect(line.results.filter((r) => !r.ok)).toEqual([]);
    expect(line.results.map((r) => r.name)).toEqual(STORE_CASES.map((c) => c.name));
  });
});
