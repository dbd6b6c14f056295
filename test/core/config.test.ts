import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config.js";

describe("configuration", () => {
  it("has the contract's defaults", () => {
    const config = resolveConfig({}, { XDG_DATA_HOME: "/data" });
    expect(config).toMatchObject({
      databasePath: "/data/opencode/todo-continuation.db",
      enabled: true,
      countdownSeconds: 2,
      resumeWindowSeconds: 60,
      gracePeriodMs: 500,
      errorCooldownMs: 3000,
      skipAgents: ["plan", "compaction"],
      continueChildSessions: false,
      stagnationLimit: 3,
      maxContinuations: 20,
    });
    expect(config.prompt.startsWith("[SYSTEM REMINDER - TODO CONTINUATION]")).toBe(true);
  });

  it("falls back to ~/.local/share when XDG_DATA_HOME is unset", () => {
    expect(resolveConfig({}, { HOME: "/home/u" }).databasePath).toMatch(
      /\.local\/share\/opencode\/todo-continuation\.db$/,
    );
  });

  it("environment variables win over plugin options, which win over defaults", () => {
    const env = {
      TODO_CONTINUATION_COUNTDOWN_SECONDS: "5",
      TODO_CONTINUATION_ENABLED: "false",
      TODO_CONTINUATION_DB: "/tmp/x.db",
    };
    const config = resolveConfig(
      { countdownSeconds: 3, enabled: true, databasePath: "/tmp/y.db", stagnationLimit: 7 },
      env,
    );
    expect(config).toMatchObject({
      countdownSeconds: 5,
      enabled: false,
      databasePath: "/tmp/x.db",
      stagnationLimit: 7,
    });
  });

  it.each([
    [{ countdownSeconds: -1 }, "countdownSeconds", "a number from 0 to 3600"],
    [{ countdownSeconds: "soon" }, "countdownSeconds", "a number"],
    [{ stagnationLimit: 1.5 }, "stagnationLimit", "an integer"],
    [{ enabled: "maybe" }, "enabled", "true or false"],
    [{ skipAgents: "plan" }, "skipAgents", undefined],
    [{ skipAgents: [1] }, "skipAgents", "an array of agent names"],
    [{ prompt: "" }, "prompt", "a non-empty string"],
    [{ countdownSecond: 2 }, "countdownSecond", "a known option"],
  ])("rejects %j naming the key and what is allowed", (options, key, allowed) => {
    if (allowed === undefined) {
      // A comma-separated string is accepted for list options (handy in environment-driven setups).
      expect(resolveConfig(options, {}).skipAgents).toEqual(["plan"]);
      return;
    }
    try {
      resolveConfig(options, {});
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).key).toBe(key);
      expect((error as Error).message).toContain(key);
      expect((error as Error).message).toContain(allowed);
    }
  });

  it("rejects a bad environment value naming the variable", () => {
    expect(() => resolveConfig({}, { TODO_CONTINUATION_RESUME_WINDOW_SECONDS: "-5" })).toThrow(
      /TODO_CONTINUATION_RESUME_WINDOW_SECONDS = "-5"/,
    );
  });

  it("rejects options that are not an object", () => {
    expect(() => resolveConfig([1, 2], {})).toThrow(ConfigError);
    expect(resolveConfig(null, {}).enabled).toBe(true);
  });
});
