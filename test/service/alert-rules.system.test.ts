// The Prometheus files the package ships (deploy/prometheus), checked by Debian's promtool: the scrape configuration
// and the rules load, and each alert fires on the series that should raise it and stays quiet on healthy ones
// (alerts.test.yml). promtool comes with the `prometheus` package that the pretest step installs; without it this
// fails rather than skips.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const DIR = join(import.meta.dirname, "../../deploy/prometheus");

function promtool(...args: string[]): string {
  try {
    return execFileSync("promtool", args, { cwd: DIR, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const e = error as { code?: string; stdout?: string; stderr?: string };
    if (e.code === "ENOENT")
      throw new Error("promtool is not installed: apt-get install prometheus (npm test's pretest does)");
    throw new Error(`promtool ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

describe("the shipped Prometheus files", () => {
  it("the scrape configuration and its rule file load", () => {
    expect(promtool("check", "config", "prometheus.yml")).toMatch(/SUCCESS: 5 rules found/);
  });

  it("every alert fires where it should and nowhere else (promtool test rules)", () => {
    expect(promtool("test", "rules", "alerts.test.yml")).toMatch(/SUCCESS/);
  });
});
