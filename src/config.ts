// Options from the plugin entry and the environment → one validated configuration. A bad value is rejected with a
// message that names the key, the value and what is allowed; the caller decides what "rejected" means (the plugin
// logs it and switches the enforcer off, the CLI exits with a usage error).
import { DEFAULT_PROMPT_TEMPLATE } from "./core/prompt.js";
import { defaultDatabasePath } from "./store/default-path.js";
import { LocationError, redactUrl, resolveLocation } from "./store/location.js";

export interface Config {
  databasePath: string;
  enabled: boolean;
  countdownSeconds: number;
  resumeWindowSeconds: number;
  gracePeriodMs: number;
  errorCooldownMs: number;
  skipAgents: string[];
  continueChildSessions: boolean;
  stagnationLimit: number;
  /** Continuations since the last todo progress whose turns changed files before stopping; 0: files never count. */
  workWithoutProgressLimit: number;
  maxContinuations: number;
  /** The most continuations may cost per session since the last real user message (0: no cap). */
  maxContinuationCost: number;
  /** The most tokens continuations may use per session since the last real user message (0: no cap). */
  maxContinuationTokens: number;
  /** The most every continuation of the database may cost per UTC day (0: no cap). */
  dailyContinuationCost: number;
  /** After a real user message that follows one of our continuations, pause until progress or a resume. */
  pauseAfterUserMessage: boolean;
  /** Continuations in a row answered with text only (no work) before stopping. */
  unproductiveLimit: number;
  /** Treat an assistant message that ends by asking the user something in text as a pending question. */
  detectTextQuestions: boolean;
  /** How long a sent continuation may take to start a turn before it counts as failed (`not_started`). */
  startTimeoutMs: number;
  /** Continue right after a finished compaction (with the session's real agent) instead of waiting for activity. */
  continueAfterCompaction: boolean;
  prompt: string;
  /** Prompt calls in flight at once across all sessions of this process. */
  maxConcurrentInjections: number;
  /**
   * Retries in a row after a failed prompt call, an unknown outcome or a turn that never started, and re-checks in a
   * row after provider errors, before the enforcer gives up.
   */
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** How long a process owns an armed countdown without renewing; another process takes it over after that. */
  leaseMs: number;
  /** Timeout of each read from OpenCode (todos, messages, session info). */
  hostTimeoutMs: number;
  /** Timeout of the prompt call. */
  promptTimeoutMs: number;
  /** Show the countdown toast every second (and the toast that says why continuation stopped). */
  toast: boolean;
  /** A continuation shows in the transcript as one line; the full prompt still reaches the model. */
  quietTranscript: boolean;
  /** Delete settled history older than this many days, in the background (0: keep everything). */
  retentionDays: number;
  /** How long a write waits for another process's lock before the enforcer pauses (it blocks the host meanwhile). */
  busyTimeoutMs: number;
  /** How often a paused enforcer tries the database again. */
  storeProbeMs: number;
}

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly value: unknown,
    readonly allowed: string,
  ) {
    super(`invalid configuration: ${key} = ${describe(value)}; allowed: ${allowed}`);
    this.name = "ConfigError";
  }
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 80)}…` : text;
  } catch {
    return String(value);
  }
}

type Parser<T> = (key: string, value: unknown) => T;

const boolean: Parser<boolean> = (key, value) => {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    const v = value.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(v)) return true;
    if (["false", "0", "no", "off"].includes(v)) return false;
  }
  throw new ConfigError(key, value, "true or false");
};

function number(min: number, max: number, integer = false): Parser<number> {
  const allowed = `${integer ? "an integer" : "a number"} from ${min} to ${max}`;
  return (key, value) => {
    const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new ConfigError(key, value, allowed);
    }
    return n;
  };
}

const nonEmptyString: Parser<string> = (key, value) => {
  if (typeof value === "string" && value.trim() !== "") return value;
  throw new ConfigError(key, value, "a non-empty string");
};

const stringList: Parser<string[]> = (key, value) => {
  const list =
    typeof value === "string"
      ? value
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : value;
  if (Array.isArray(list) && list.every((s) => typeof s === "string" && s.trim() !== "")) return [...list];
  throw new ConfigError(key, value, "an array of agent names");
};

interface OptionSpec<T> {
  parse: Parser<T>;
  fallback: (env: NodeJS.ProcessEnv) => T;
  env?: string;
}

function spec<T>(parse: Parser<T>, fallback: T | ((env: NodeJS.ProcessEnv) => T), env?: string): OptionSpec<T> {
  return {
    parse,
    fallback: typeof fallback === "function" ? (fallback as (e: NodeJS.ProcessEnv) => T) : () => fallback,
    env,
  };
}

const SPECS: { [K in keyof Config]: OptionSpec<Config[K]> } = {
  databasePath: spec(nonEmptyString, defaultDatabasePath, "TODO_CONTINUATION_DB"),
  enabled: spec(boolean, true, "TODO_CONTINUATION_ENABLED"),
  countdownSeconds: spec(number(0, 3600), 2, "TODO_CONTINUATION_COUNTDOWN_SECONDS"),
  resumeWindowSeconds: spec(number(0, 7 * 24 * 3600), 60, "TODO_CONTINUATION_RESUME_WINDOW_SECONDS"),
  gracePeriodMs: spec(number(0, 60_000, true), 500),
  errorCooldownMs: spec(number(0, 3_600_000, true), 3000),
  skipAgents: spec(stringList, () => ["plan", "compaction"]),
  continueChildSessions: spec(boolean, false),
  stagnationLimit: spec(number(1, 1000, true), 3),
  workWithoutProgressLimit: spec(number(0, 1000, true), 8),
  maxContinuationCost: spec(number(0, 1_000_000), 0),
  maxContinuationTokens: spec(number(0, 1e12, true), 0),
  dailyContinuationCost: spec(number(0, 1_000_000), 0),
  maxContinuations: spec(number(1, 100_000, true), 20),
  pauseAfterUserMessage: spec(boolean, true),
  unproductiveLimit: spec(number(1, 1000, true), 1),
  detectTextQuestions: spec(boolean, true),
  startTimeoutMs: spec(number(500, 600_000, true), 10_000),
  continueAfterCompaction: spec(boolean, false),
  prompt: spec(nonEmptyString, DEFAULT_PROMPT_TEMPLATE),
  maxConcurrentInjections: spec(number(1, 1000, true), 8),
  maxRetries: spec(number(0, 100, true), 3),
  retryBaseMs: spec(number(0, 3_600_000, true), 5000),
  retryMaxMs: spec(number(0, 24 * 3_600_000, true), 60_000),
  leaseMs: spec(number(500, 3_600_000, true), 15_000),
  hostTimeoutMs: spec(number(100, 600_000, true), 10_000),
  promptTimeoutMs: spec(number(100, 600_000, true), 30_000),
  toast: spec(boolean, true),
  quietTranscript: spec(boolean, true),
  retentionDays: spec(number(0, 36_500), 0, "TODO_CONTINUATION_RETENTION_DAYS"),
  busyTimeoutMs: spec(number(0, 60_000, true), 1000),
  storeProbeMs: spec(number(100, 3_600_000, true), 5000),
};

export const OPTION_KEYS = Object.keys(SPECS) as Array<keyof Config>;

/**
 * Environment variables win over plugin options, which win over defaults. Unknown option keys are rejected too. A
 * relative `databasePath` is resolved against `directory` (the plugin passes its project's), `~` against `$HOME`.
 */
export function resolveConfig(
  options: unknown = {},
  env: NodeJS.ProcessEnv = process.env,
  directory: string = process.cwd(),
): Config {
  if (options === null || options === undefined) options = {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new ConfigError("options", options, "an object of options");
  }
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    // An own-property check: `in` would take `constructor` or `toString` for options.
    if (!Object.hasOwn(SPECS, key))
      throw new ConfigError(key, given[key], `a known option (${OPTION_KEYS.join(", ")})`);
  }
  const config = {} as Record<keyof Config, unknown>;
  const source = {} as Record<keyof Config, string>;
  for (const key of OPTION_KEYS) {
    const option = SPECS[key] as OptionSpec<unknown>;
    const fromEnv = option.env ? env[option.env] : undefined;
    source[key] = fromEnv !== undefined && fromEnv !== "" ? option.env! : key;
    if (source[key] !== key) config[key] = option.parse(source[key], fromEnv);
    else if (given[key] !== undefined) config[key] = option.parse(key, given[key]);
    else config[key] = option.fallback(env);
  }
  config.databasePath = databaseLocation(source.databasePath, config.databasePath as string, env, directory);
  refuseContradictions(config as Config);
  return config as Config;
}

/** The location a configured database path or URL names; a ConfigError (never showing a password) if none. */
export function databaseLocation(key: string, given: string, env: NodeJS.ProcessEnv, directory: string): string {
  try {
    return resolveLocation(given, { directory, home: env.HOME?.trim() ? env.HOME : undefined });
  } catch (error) {
    if (error instanceof LocationError) throw new ConfigError(key, redactUrl(given), error.allowed);
    throw error;
  }
}

/** Values that are each allowed alone but cannot hold together. */
function refuseContradictions(config: Config): void {
  // Both back-offs start at their base and double up to retryMaxMs: a base above the cap contradicts it.
  for (const key of ["retryBaseMs", "errorCooldownMs"] as const)
    if (config[key] > config.retryMaxMs)
      throw new ConfigError(key, config[key], `at most retryMaxMs (${config.retryMaxMs})`);
}
