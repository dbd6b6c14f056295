// Another enforcer in the same OpenCode: oh-my-opencode (now also published as oh-my-openagent) ships its own
// `todo-continuation-enforcer` hook, on by default. Two enforcers would both continue the same idle session. It is off
// when its config file (project's `.opencode/` or the user's OpenCode folder, `.json` or `.jsonc`) lists the hook
// under `disabled_hooks`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { projectConfigFolder, userConfigFolder } from "../config/files.js";
import { parseJsonc } from "../config/jsonc.js";

const PEER = /(^|[/@\\])oh-my-open(code|agent)(@[^/]*)?$|(^|[/\\])oh-my-open(code|agent)[/\\]/i;
const PEER_HOOK = "todo-continuation-enforcer";

/** The plugin specs of an OpenCode config's `plugin` list: a name or file URL, alone or with its options. */
function specsOf(plugins: unknown): string[] {
  if (!Array.isArray(plugins)) return [];
  return plugins
    .map((entry) => (Array.isArray(entry) ? entry[0] : entry))
    .filter((spec): spec is string => typeof spec === "string");
}

/** The peer's config files that exist, for both of its names. */
function peerConfigFiles(directory: string, env: NodeJS.ProcessEnv): string[] {
  const names = ["oh-my-opencode", "oh-my-openagent"].flatMap((n) => [`${n}.jsonc`, `${n}.json`]);
  return [projectConfigFolder(directory), userConfigFolder(env)]
    .flatMap((folder) => names.map((name) => join(folder, name)))
    .filter((path) => existsSync(path));
}

function disablesPeerHook(path: string): boolean {
  try {
    const config = parseJsonc(readFileSync(path, "utf8")) as { disabled_hooks?: unknown };
    return Array.isArray(config?.disabled_hooks) && config.disabled_hooks.includes(PEER_HOOK);
  } catch {
    return false;
  }
}

/**
 * A warning when OpenCode's config loads oh-my-opencode and no config file of it turns its enforcer off, with the two
 * ways to have one enforcer; undefined otherwise.
 */
export function otherEnforcerWarning(
  opencodeConfig: { plugin?: unknown } | undefined,
  directory: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const peer = specsOf(opencodeConfig?.plugin).find((spec) => PEER.test(spec));
  if (!peer) return undefined;
  const files = peerConfigFiles(directory, env);
  if (files.some(disablesPeerHook)) return undefined;
  const where = files[0] ?? join(userConfigFolder(env), "oh-my-opencode.json");
  return (
    `${peer} is loaded too, and its own ${PEER_HOOK} is on: both would continue the same sessions. ` +
    `Keep one: add "disabled_hooks": ["${PEER_HOOK}"] to ${where}, or set "enabled": false in .opencode/todo-continuation.jsonc.`
  );
}
