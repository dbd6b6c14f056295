import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve.js";

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
      workWithoutProgressLimit: 8,
      maxContinuations: 20,
    });
    expect(resolveConfig({ workWithoutProgressLimit: 0 }, {}).workWithoutProgressLimit).toBe(0);
    // A default of null is a default, not "no default" (only the database's path is made from the environment).
    expect(config.verify).toBeNull();
    expect(resolveConfig({ verify: { command: "npm test" } }, {}).verify).toEqual({
      command: "npm test",
      timeoutSeconds: 600,
      maxRuns: 5,
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
    [{ workWithoutProgressLimit: -1 }, "workWithoutProgressLimit", "an integer from 0 to 1000"],
    [{ workWithoutProgressLimit: 1.5 }, "workWithoutProgressLimit", "an integer"],
    [{ workWithoutProgressLimit: "many" }, "workWithoutProgressLimit", "an integer from 0 to 1000"],
    [{ enabled: "maybe" }, "enabled", "true or false"],
    [{ skipAgents: "plan" }, "skipAgents", "an array of agent names"],
    [{ toast: "yes" }, "toast", "true or false"],
    [{ countdownSeconds: "5" }, "countdownSeconds", "a number from 0 to 3600"],
    [{ skipAgents: [1] }, "skipAgents", "an array of agent names"],
    [{ prompt: "" }, "prompt", "a non-empty string"],
    [{ countdownSecond: 2 }, "countdownSecond", "a known option"],
  ])("rejects %j naming the key and what is allowed", (options, key, allowed) => {
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

  it.each([
    ["constructor", 5],
    ["toString", "x"],
    ["hasOwnProperty", true],
    ["__proto__", {}],
  ])("refuses %s like any other unknown option name", (key, value) => {
    const options = JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(value)}}`) as Record<string, unknown>;
    expect(() => resolveConfig(options, {})).toThrow(
      expect.objectContaining({ key, message: expect.stringContaining("a known option") }),
    );
  });

  it.each([
    [{ retryBaseMs: 120_000, retryMaxMs: 60_000 }, "retryBaseMs", "at most retryMaxMs (60000)"],
    [{ retryBaseMs: 10_000, retryMaxMs: 5000 }, "retryBaseMs", "at most retryMaxMs (5000)"],
    [{ errorCooldownMs: 120_000 }, "errorCooldownMs", "at most retryMaxMs (60000)"],
  ])("refuses %j: options that contradict each other", (options, key, allowed) => {
    expect(() => resolveConfig(options, {})).toThrow(
      expect.objectContaining({ key, message: expect.stringContaining(allowed) }),
    );
  });

  it("accepts options that agree at their bounds, and a lock wait longer than the lease (claims are fenced)", () => {
    expect(resolveConfig({ retryBaseMs: 60_000, retryMaxMs: 60_000 }, {})).toMatchObject({ retryBaseMs: 60_000 });
    expect(resolveConfig({ busyTimeoutMs: 5000, leaseMs: 1000 }, {})).toMatchObject({ busyTimeoutMs: 5000 });
  });

  describe("where the database is", () => {
    const env = { HOME: "/home/u" };

    it.each([
      ["~/todo.db", "/home/u/todo.db"],
      ["~", "/home/u"],
      ["state/todo.db", "/work/project/state/todo.db"],
      ["../shared.db", "/work/shared.db"],
      ["/abs/todo.db", "/abs/todo.db"],
      [":memory:", ":memory:"],
      ["postgres://u:pw@db.local:5432/todo", "postgres://u:pw@db.local:5432/todo"],
      ["postgresql://u@db.local/todo", "postgresql://u@db.local/todo"],
    ])("%s → %s", (given, expected) => {
      expect(resolveConfig({ databasePath: given }, env, "/work/project").databasePath).toBe(expected);
      expect(resolveConfig({}, { ...env, TODO_CONTINUATION_DB: given }, "/work/project").databasePath).toBe(expected);
    });

    it.each([
      ["mysql://u:s3cret@host/x", "a file path (SQLite) or a postgres:// or postgresql:// URL"],
      ["sqlite:///tmp/x.db", "a file path (SQLite) or a postgres:// or postgresql:// URL"],
      ["postgres://u:s3cret@host:port/x", "a valid URL"],
      ["postgres://u:s3cret@/x", "a valid URL"],
    ])("refuses %s without showing its password", (given, allowed) => {
      for (const [options, environment, key] of [
        [{ databasePath: given }, env, "databasePath"],
        [{}, { ...env, TODO_CONTINUATION_DB: given }, "TODO_CONTINUATION_DB"],
      ] as const) {
        let error: unknown;
        try {
          resolveConfig(options, environment, "/work/project");
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConfigError);
        expect(error).toMatchObject({ key, message: expect.stringContaining(allowed) });
        expect(JSON.stringify(error)).not.toContain("s3cret");
        expect((error as Error).message).not.toContain("s3cret");
      }
    });
  });

  it("rejects options that are not an object", () => {
    expect(() => resolveConfig([1, 2], {})).toThrow(ConfigError);
    expect(resolveConfig(null, {}).enabled).toBe(true);
  });
});
