// Every source of options → one validated configuration, and where each value came from. Sources, highest first:
// environment variables, the plugin options (opencode.json), the project's file, the user's file, the defaults.
// Every problem of every source is collected (a person fixes them all at once); the caller decides what a problem
// means (the plugin stays off and says so, the CLI exits with a usage error).
import { isAbsolute } from "node:path";
import type * as z from "zod";
import { nearest } from "../core/nearest.js";
import { defaultDatabasePath } from "../store/open/default-path.js";
import { LocationError, redactUrl, resolveLocation } from "../store/open/location.js";
import { shownChannels, withoutSecrets } from "../notices/redact.js";
import { findConfigFiles, readConfigFile, type ConfigFile } from "./files.js";
import {
  allowedOf,
  ENFORCER_KEYS,
  ENFORCER_OPTIONS,
  TUI_OPTIONS,
  type EnforcerOptionKey,
  type OptionSpec,
} from "./options.js";
import { zod } from "./zod.js";

export type Config = { [K in EnforcerOptionKey]: Exclude<z.output<(typeof ENFORCER_OPTIONS)[K]["schema"]>, undefined> };

export const OPTION_KEYS = ENFORCER_KEYS;

/** One thing wrong with one value of one source. */
export interface ConfigProblem {
  /** Where the value was: "plugin options", a file's path, or "environment". */
  source: string;
  /** The option, or the environment variable, as the person wrote it. */
  key: string;
  value: unknown;
  allowed: string;
  /** The problem in one line, naming the source when it is not the plugin options. */
  text: string;
}

export class ConfigError extends Error {
  readonly key: string;
  readonly value: unknown;
  readonly allowed: string;
  readonly problems: ConfigProblem[];

  constructor(problems: ConfigProblem[]);
  constructor(key: string, value: unknown, allowed: string);
  constructor(first: string | ConfigProblem[], value?: unknown, allowed?: string) {
    const problems = typeof first === "string" ? [problemOf("plugin options", first, value, allowed!)] : first;
    super(`invalid configuration: ${problems.map((p) => p.text).join(" · ")}`);
    this.name = "ConfigError";
    this.problems = problems;
    this.key = problems[0]!.key;
    this.value = problems[0]!.value;
    this.allowed = problems[0]!.allowed;
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

/** What a problem may show of a value: a channel's URLs, tokens and secrets never (they are credentials). */
function shown(key: string, value: unknown): unknown {
  const option = key.split(".").at(-1)!;
  if (option === "notify") return shownChannels(value);
  return Object.hasOwn(ENFORCER_OPTIONS, option) || Object.hasOwn(TUI_OPTIONS, option) ? value : withoutSecrets(value);
}

export function problemOf(source: string, key: string, value: unknown, allowed: string): ConfigProblem {
  const where = source === "plugin options" || source === "environment" ? "" : `in ${source}: `;
  const safe = shown(key, value);
  return { source, key, value: safe, allowed, text: `${where}${key} = ${describe(safe)}; allowed: ${allowed}` };
}

const TRUE_WORDS = ["true", "1", "yes", "on"];
const FALSE_WORDS = ["false", "0", "no", "off"];

/**
 * An environment variable's text read as the number or switch its option means: a variable is only ever a string.
 * Values written in JSON (the files, the plugin options, tui.json) are not read this way: they are checked as the
 * shipped schema checks them, so that an editor, the plugin and doctor agree on what a file may hold.
 */
function fromEnvironment(spec: OptionSpec, value: string): unknown {
  const v = value.trim();
  switch (spec.schema.def.type) {
    case "number":
      return v === "" ? value : Number(v);
    case "boolean":
      return TRUE_WORDS.includes(v.toLowerCase()) ? true : FALSE_WORDS.includes(v.toLowerCase()) ? false : value;
    default:
      return value;
  }
}

type Specs = Record<string, OptionSpec>;

/** A source's values checked against `specs`; a problem for every unknown key and every bad value. */
export function checkValues(
  source: string,
  given: Record<string, unknown>,
  specs: Specs,
  problems: ConfigProblem[],
  prefix = "",
): Record<string, unknown> {
  const keys = Object.keys(specs);
  const values: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(given)) {
    // An own-property check: `in` would take `constructor` or `toString` for options.
    if (!Object.hasOwn(specs, key)) {
      const near = nearest(key, keys);
      const known = near ? ` (did you mean ${prefix}${near}?)` : ` (${keys.join(", ")})`;
      problems.push(problemOf(source, prefix + key, raw, `a known option${known}`));
      continue;
    }
    if (raw === undefined) continue;
    const spec = specs[key]!;
    const schema = spec.entriesApart ? zod().array(zod().unknown()) : spec.schema;
    const parsed = schema.safeParse(raw);
    if (parsed.success) values[key] = parsed.data;
    else problems.push(problemOf(source, prefix + key, raw, allowedOf(spec)));
  }
  return values;
}

export function asObject(source: string, value: unknown, problems: ConfigProblem[]): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  problems.push(problemOf(source, "options", value, "an object of options"));
  return {};
}

/** One source's checked values, highest precedence last when a list of them is merged. */
interface Layer {
  source: string;
  values: Record<string, unknown>;
  /** The TUI's options, which a file may hold under `tui`. */
  tui?: Record<string, unknown>;
}

function fileLayer(file: ConfigFile, problems: ConfigProblem[]): Layer {
  const content = readConfigFile(file.path);
  if ("problem" in content) {
    problems.push({
      source: file.path,
      key: file.path,
      value: undefined,
      allowed: "",
      text: `${file.path} is ${content.problem}`,
    });
    return { source: file.path, values: {} };
  }
  const { $schema: _schema, tui, ...rest } = content.values;
  const layer: Layer = { source: file.path, values: checkValues(file.path, rest, ENFORCER_OPTIONS, problems) };
  if (tui !== undefined)
    layer.tui = checkValues(file.path, asObject(file.path, tui, problems), TUI_OPTIONS, problems, "tui.");
  return layer;
}

function environmentLayer(env: NodeJS.ProcessEnv, problems: ConfigProblem[]): Layer[] {
  const layers: Layer[] = [];
  for (const key of ENFORCER_KEYS) {
    const spec: OptionSpec = ENFORCER_OPTIONS[key];
    const raw = spec.env ? env[spec.env] : undefined;
    if (raw === undefined || raw === "") continue;
    const values = checkValues("environment", { [key]: fromEnvironment(spec, raw) }, { [key]: spec }, []);
    if (key in values) layers.push({ source: spec.env!, values });
    else problems.push(problemOf("environment", spec.env!, raw, allowedOf(spec)));
  }
  return layers;
}

export interface ConfigSources {
  /** The plugin options (the object after the plugin's entry in opencode.json, or `serve --options`). */
  options?: unknown;
  env?: NodeJS.ProcessEnv;
  /** The project directory: where `.opencode/` is, and what a relative databasePath hangs off. */
  directory?: string;
  /** Read the configuration files (the plugin, the TUI, the CLI); tests of the other sources leave them out. */
  files?: boolean;
}

export interface Resolution {
  /** Undefined when a problem was found: the configuration is all right or it is not used. */
  config: Config | undefined;
  /** Every option's value from the best source that gave a valid one, problems or not (the TUI's database). */
  merged: Config;
  /** For every option, where its value came from: "default", "plugin options", a file's path, or a variable's name. */
  sources: Record<EnforcerOptionKey, string>;
  /** The TUI's options found in files (cancelKey, cancelOnTyping), each with its source. */
  tui: Record<string, { value: unknown; source: string }>;
  problems: ConfigProblem[];
  warnings: string[];
  files: string[];
}

/** Every source read, checked and merged; never throws. */
export function resolveConfiguration(sources: ConfigSources = {}): Resolution {
  const env = sources.env ?? process.env;
  const directory = sources.directory ?? process.cwd();
  const problems: ConfigProblem[] = [];
  const found = sources.files ? findConfigFiles(directory, env) : { files: [], warnings: [] };
  const layers: Layer[] = found.files.map((file) => fileLayer(file, problems));
  layers.push({
    source: "plugin options",
    values: checkValues(
      "plugin options",
      asObject("plugin options", sources.options, problems),
      ENFORCER_OPTIONS,
      problems,
    ),
  });
  layers.push(...environmentLayer(env, problems));

  const config = {} as Record<EnforcerOptionKey, unknown>;
  const from = {} as Record<EnforcerOptionKey, string>;
  for (const key of ENFORCER_KEYS) {
    const layer = layers.findLast((l) => key in l.values);
    // `databasePath` alone has no fixed default (it depends on the environment); `null` is a default (`verify`'s).
    const fixed = ENFORCER_OPTIONS[key].default;
    config[key] = layer ? layer.values[key] : fixed !== undefined ? fixed : defaultDatabasePath(env);
    from[key] = layer ? layer.source : "default";
  }
  try {
    const key = from.databasePath.startsWith("TODO_") ? from.databasePath : "databasePath";
    config.databasePath = databaseLocation(
      key,
      config.databasePath as string,
      env,
      directory,
      sourceName(from.databasePath),
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  problems.push(...contradictions(config as Config, from));

  const tui: Resolution["tui"] = {};
  for (const layer of layers)
    for (const [key, value] of Object.entries(layer.tui ?? {})) tui[key] = { value, source: layer.source };
  return {
    config: problems.length === 0 ? (config as Config) : undefined,
    merged: config as Config,
    sources: from,
    tui,
    problems,
    warnings: found.warnings,
    files: found.files.map((f) => f.path),
  };
}

/**
 * The configuration of the plugin options and the environment alone (no files), or a ConfigError naming every
 * problem. A relative `databasePath` is resolved against `directory`, `~` against `$HOME`.
 */
export function resolveConfig(
  options: unknown = {},
  env: NodeJS.ProcessEnv = process.env,
  directory: string = process.cwd(),
): Config {
  const resolution = resolveConfiguration({ options, env, directory });
  if (!resolution.config) throw new ConfigError(resolution.problems);
  return resolution.config;
}

/** The location a configured database path or URL names; a ConfigError (never showing a password) if none. */
export function databaseLocation(
  key: string,
  given: string,
  env: NodeJS.ProcessEnv,
  directory: string,
  source = sourceName(key),
): string {
  try {
    return resolveLocation(given, { directory, home: env.HOME?.trim() ? env.HOME : undefined });
  } catch (error) {
    if (error instanceof LocationError)
      throw new ConfigError([problemOf(source, key, redactUrl(given), error.allowed)]);
    throw error;
  }
}

/** Values that are each allowed alone but cannot hold together. */
function contradictions(config: Config, from: Record<EnforcerOptionKey, string>): ConfigProblem[] {
  // Both back-offs start at their base and double up to retryMaxMs: a base above the cap contradicts it.
  return (["retryBaseMs", "errorCooldownMs"] as const)
    .filter((key) => config[key] > config.retryMaxMs)
    .map((key) => problemOf(sourceName(from[key]), key, config[key], `at most retryMaxMs (${config.retryMaxMs})`));
}

/** A source that is a configuration file (sources are named by the file's absolute path). */
export function isFileSource(source: string): boolean {
  return isAbsolute(source);
}

/** The source a problem names, from a value's origin: a file's path, "environment" or the plugin options. */
function sourceName(from: string): string {
  return from.startsWith("TODO_") ? "environment" : isFileSource(from) ? from : "plugin options";
}
