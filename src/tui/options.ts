// The TUI plugin's settings. Sources, highest first: TODO_CONTINUATION_DB, the object after its entry in tui.json, the
// `tui` section (and `databasePath`) of the project's and the user's todo-continuation.json(c), the defaults. Checked
// with the same schema and the same errors as the server plugin's options, so both find the same database.
import {
  asObject,
  checkValues,
  ConfigError,
  databaseLocation,
  isFileSource,
  resolveConfiguration,
} from "../config/resolve.js";
import type { ConfigProblem } from "../config/resolve.js";
import { findConfigFiles } from "../config/files.js";
import { ENFORCER_OPTIONS, TUI_OPTIONS } from "../config/options.js";
import { defaultDatabasePath } from "../store/open/default-path.js";

export interface TuiOptions {
  databasePath: string;
  /** The key that cancels a running countdown: "escape" (default), or any OpenCode key such as "ctrl+y". */
  cancelKey: string;
  /** Typing into the prompt while a countdown runs cancels it too (you are about to write: nothing is sent). */
  cancelOnTyping: boolean;
}

const SOURCE = "tui.json";

/**
 * `directory` is the project's: a relative `databasePath` resolves against it, as the server plugin's does. With
 * `files`, the configuration files are read too; a problem in them that is not the TUI's is the server plugin's to
 * report (its status file), so it does not stop the TUI here.
 */
export function resolveTuiOptions(
  options: unknown = {},
  env: NodeJS.ProcessEnv = process.env,
  directory: string = process.cwd(),
  files = false,
): TuiOptions {
  const problems: ConfigProblem[] = [];
  const given = checkValues(
    SOURCE,
    asObject(SOURCE, options, problems),
    { ...TUI_OPTIONS, databasePath: ENFORCER_OPTIONS.databasePath },
    problems,
  );
  const fromFiles = files
    ? resolveConfiguration({ env: { ...env, TODO_CONTINUATION_DB: "" }, directory, files })
    : undefined;
  if (fromFiles) problems.push(...fromFiles.problems.filter((p) => p.key.startsWith("tui.")));
  if (problems.length > 0) throw new ConfigError(problems);

  const fromEnv = env.TODO_CONTINUATION_DB;
  const fileDatabase =
    fromFiles && isFileSource(fromFiles.sources.databasePath) ? fromFiles.merged.databasePath : undefined;
  const [key, location] = fromEnv
    ? ["TODO_CONTINUATION_DB", fromEnv]
    : ["databasePath", (given.databasePath as string | undefined) ?? fileDatabase ?? defaultDatabasePath(env)];
  const tuiValue = <T>(name: keyof typeof TUI_OPTIONS): T =>
    (given[name] ?? fromFiles?.tui[name]?.value ?? TUI_OPTIONS[name].default) as T;
  return {
    databasePath: databaseLocation(key, location, env, directory),
    cancelKey: tuiValue<string>("cancelKey").trim().toLowerCase(),
    cancelOnTyping: tuiValue<boolean>("cancelOnTyping"),
  };
}

/** Whether the TUI has settings to check: options in tui.json, or a configuration file of the project or the user. */
export function somethingToCheck(options: unknown, directory: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const given = typeof options === "object" && options !== null && Object.keys(options).length > 0;
  return given || findConfigFiles(directory, env).files.length > 0;
}

/** How a key is named to the user in the panel. */
export function keyLabel(key: string): string {
  return key === "escape" ? "esc" : key;
}
