// The TUI plugin's options (the object after its spec in tui.json) and the environment → settings, with the same
// clear errors as the server plugin's options. The database path resolves like the server plugin's, so both find
// the same file by default.
import { ConfigError, databaseLocation } from "../config.js";
import { defaultDatabasePath } from "../store/default-path.js";

export interface TuiOptions {
  databasePath: string;
  /** The key that cancels a running countdown: "escape" (default), or any OpenCode key such as "ctrl+y". */
  cancelKey: string;
  /** Typing into the prompt while a countdown runs cancels it too (you are about to write: nothing is sent). */
  cancelOnTyping: boolean;
}

const KEYS = ["databasePath", "cancelKey", "cancelOnTyping"] as const;
const KEY_PATTERN =
  /^(<leader>)?((ctrl|alt|shift|meta|super)\+)*([a-z0-9]|f\d{1,2}|escape|tab|space|return|backspace|delete|home|end|pageup|pagedown|up|down|left|right|[-.,;/\\[\]'`=])$/;

/** `directory` is the project's: a relative `databasePath` resolves against it, as the server plugin's does. */
export function resolveTuiOptions(
  options: unknown = {},
  env: NodeJS.ProcessEnv = process.env,
  directory: string = process.cwd(),
): TuiOptions {
  if (options === null || options === undefined) options = {};
  if (typeof options !== "object" || Array.isArray(options))
    throw new ConfigError("options", options, "an object of options");
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(KEYS as readonly string[]).includes(key))
      throw new ConfigError(key, given[key], `a known option (${KEYS.join(", ")})`);
  }
  const fromEnv = env.TODO_CONTINUATION_DB;
  const key = fromEnv && fromEnv !== "" ? "TODO_CONTINUATION_DB" : "databasePath";
  const location = key === "databasePath" ? (given.databasePath ?? defaultDatabasePath(env)) : fromEnv;
  if (typeof location !== "string" || location.trim() === "")
    throw new ConfigError(key, location, "a non-empty string");
  const databasePath = databaseLocation(key, location, env, directory);
  const cancelKey = given.cancelKey ?? "escape";
  if (typeof cancelKey !== "string" || !KEY_PATTERN.test(cancelKey.trim().toLowerCase())) {
    throw new ConfigError("cancelKey", cancelKey, 'an OpenCode key such as "escape", "ctrl+y" or "<leader>k"');
  }
  const cancelOnTyping = given.cancelOnTyping ?? true;
  if (typeof cancelOnTyping !== "boolean") throw new ConfigError("cancelOnTyping", cancelOnTyping, "true or false");
  return { databasePath, cancelKey: cancelKey.trim().toLowerCase(), cancelOnTyping };
}

/** How a key is named to the user in the panel. */
export function keyLabel(key: string): string {
  return key === "escape" ? "esc" : key;
}
