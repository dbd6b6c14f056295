// Whether an OpenCode agent may run a shell command without being asked, judged as OpenCode 1.18.33's `bash` tool
// judges it (docs/research/bash-permission.md has each rule with its source). `continue_later` runs its `check` only
// when this says yes, so the check can never do what the person's permissions would have stopped or asked about.
//
// OpenCode parses the command with tree-sitter and checks every `command` node it finds. We have no tree-sitter, so a
// small splitter (shell-split.ts) takes the plain shape only, and refuses what it would have to guess; this refuses,
// besides, anything that runs a string as shell code.
import path from "node:path";
import { split, type SimpleCommand, type Word } from "./shell-split.js";

export type BashVerdict = { allowed: true } | { allowed: false; why: string };

type Action = "allow" | "ask" | "deny";
type Rule = { permission: string; pattern: string; action: Action };

const NO_ASKING = "checks run only what it may run without asking";
const PLAIN = "write the check as plain commands joined by |, &&, || or ;";
const NAME_PATHS = "name each path inside the project plainly";

/**
 * OpenCode's wildcard: `*` is any run of characters (slashes and newlines too), `?` any one character, everything
 * else itself; a pattern ending in " *" also matches without that tail ("git status *" matches "git status").
 * Backslashes count as slashes on both sides.
 */
export function wildcardMatches(text: string, pattern: string): boolean {
  let body = pattern.replaceAll("\\", "/");
  const optionalTail = body.endsWith(" *");
  if (optionalTail) body = body.slice(0, -2);
  let source = "";
  for (const char of body) {
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else source += /[.+^${}()|[\]\\]/.test(char) ? `\\${char}` : char;
  }
  if (optionalTail) source += "( .*)?";
  return new RegExp(`^${source}$`, "s").test(text.replaceAll("\\", "/"));
}

/** The last rule whose permission and pattern both match decides; with none, OpenCode asks. */
function decide(permission: string, subject: string, rules: readonly Rule[]): Action {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!;
    if (wildcardMatches(permission, rule.permission) && wildcardMatches(subject, rule.pattern)) return rule.action;
  }
  return "ask";
}

/** A ruleset as 1.18.33 sends it, or undefined when any part of it is not that shape (we cannot judge what we misread). */
function readRules(list: unknown): Rule[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const rules: Rule[] = [];
  for (const item of list) {
    if (!item || typeof item !== "object") return undefined;
    const { permission, pattern, action } = item as Record<string, unknown>;
    if (typeof permission !== "string" || typeof pattern !== "string") return undefined;
    if (action !== "allow" && action !== "ask" && action !== "deny") return undefined;
    rules.push({ permission, pattern, action });
  }
  return rules;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
const KEYWORDS = new Set([
  ...["if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "select", "in"],
  ...["function", "coproc", "[[", "]]"],
]);
/** Builtins that run a string or a file as shell code, or replace the shell: what they run no rule ever sees. */
const CODE_RUNNERS = new Set(["eval", "exec", "source", ".", "trap"]);
/**
 * OpenCode matches no `bash` rule for these and resolves every later relative path from the project folder as if
 * the folder had not changed; we do not follow a check into another folder.
 */
const FOLDER_CHANGERS = new Set(["cd", "chdir", "pushd", "popd"]);
const BUILTIN_RUNNERS = new Set(["command", "builtin"]);
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox"]);
/** The commands whose path arguments OpenCode 1.18.33 checks against `external_directory` (ShellTool.collect). */
const PATH_COMMANDS = new Set([
  ...["cd", "chdir", "popd", "pushd", "push-location", "set-location", "rm", "cp", "mv", "mkdir", "touch"],
  ...["chmod", "chown", "cat", "get-content", "set-content", "add-content", "copy-item", "move-item", "remove-item"],
  ...["new-item", "rename-item"],
]);

/** The first word that is not a leading `NAME=value`, if the command has one. */
function commandName(command: SimpleCommand, source: string): Word | undefined {
  return command.words.find((word) => !ASSIGNMENT.test(source.slice(word.start, word.end)));
}

/** Why a command's kind is refused before its text is even matched, if it is. */
function refusedKind(command: SimpleCommand, source: string): string | undefined {
  const name = commandName(command, source);
  if (!name) return "only sets variables and runs no command";
  if (KEYWORDS.has(name.value)) return `uses the shell keyword "${name.value}"`;
  const rest = command.words.slice(command.words.indexOf(name) + 1);
  // `command eval …` and `builtin source …` run the builtin named next.
  const named = BUILTIN_RUNNERS.has(name.value)
    ? [name, ...rest.filter((w) => !w.value.startsWith("-")).slice(0, 1)]
    : [name];
  for (const word of named) {
    const base = path.posix.basename(word.value);
    if (CODE_RUNNERS.has(base)) return `uses "${base}", which runs code that no permission rule sees`;
    if (FOLDER_CHANGERS.has(base)) return `changes folder with "${base}", but a check runs in the project folder`;
  }
  // A shell given -c runs a string the rules never see split, also behind a wrapper (env sh -c, sudo bash -c).
  const words = [name, ...rest];
  const shell = words.findIndex((word) => SHELLS.has(path.posix.basename(word.value)));
  if (shell >= 0 && words.slice(shell + 1).some((w) => /^-[A-Za-z]*c/.test(w.value) || w.value === "--command")) {
    return `runs a string as shell code with "${words[shell]!.value}"`;
  }
  return undefined;
}

/**
 * The texts OpenCode matches against the `bash` rules for one command: the command node's text, from its first
 * assignment or its name to its last argument, with its trailing redirections when tree-sitter puts them in a
 * `redirected_statement` around the command alone. Which one it does depends on the grammar's nesting (after the last
 * command of a pipeline or of an && chain, the redirection wraps the whole chain), so both are judged.
 */
function matchedTexts(command: SimpleCommand, source: string): string[] {
  const first = command.words[0]!;
  const last = command.words[command.words.length - 1]!;
  const bare = source.slice(first.start, last.end);
  if (command.redirectEnd === undefined) return [bare];
  return [bare, source.slice(first.start, command.redirectEnd)];
}

/** The folders OpenCode might ask `external_directory` about for one path: the path itself if it is a folder, else its parent. */
function outsideFolders(value: string, project: string): string[] {
  const target = path.resolve(project, value);
  const relative = path.relative(project, target);
  const inside =
    relative === "" || (!path.isAbsolute(relative) && relative !== ".." && !relative.startsWith(`..${path.sep}`));
  if (inside) return [];
  return [target, path.dirname(target)];
}

interface Context {
  agentName: string;
  rules: readonly Rule[];
  project: string;
  source: string;
}

/** The path an argument names: itself, the value of an option written `--option=path`, or none for other options. */
function pathOf(arg: string): string {
  if (!arg.startsWith("-")) return arg;
  const equals = arg.indexOf("=");
  return equals < 0 ? "" : arg.slice(equals + 1);
}

/** Why the paths a command names would make OpenCode ask, if they would. */
function refusedPaths(command: SimpleCommand, context: Context): string | undefined {
  const name = commandName(command, context.source)!;
  const args = command.words.slice(command.words.indexOf(name) + 1);
  // A wrapper (sudo rm, env rm, git rm) hides the path command from OpenCode's own check; we look through it.
  if (![name, ...args].some((word) => PATH_COMMANDS.has(path.posix.basename(word.value)))) return undefined;
  for (const arg of args) {
    const value = pathOf(arg.value);
    if (value === "") continue;
    // OpenCode reads a path only up to its first wildcard character; what the rest reaches is not known.
    if (/[*?[]/.test(value))
      return `the check gives "${name.value}" a path with a wildcard (${arg.value}): ${NAME_PATHS}`;
    if (value.includes("~")) {
      return `the check gives "${name.value}" a path in a home folder (${arg.value}), outside the project: ${NAME_PATHS}`;
    }
    for (const folder of outsideFolders(value, context.project)) {
      const action = decide("external_directory", path.join(folder, "*"), context.rules);
      if (action !== "allow") {
        const verb = action === "deny" ? "may not reach" : "would be asked before reaching";
        return `the agent "${context.agentName}" ${verb} ${folder} (outside the project) with "${name.value}": ${NO_ASKING}`;
      }
    }
  }
  return undefined;
}

/**
 * Whether `agent` (an agent as OpenCode 1.18.33's GET /agent returns it) may run `command` in `project` without
 * being asked, by its own rules and, when given, the session's (GET /session/:id; OpenCode appends them to the
 * agent's). Yes only when every command OpenCode would check is allowed and none names a path outside the project
 * that OpenCode would ask about; a check we cannot split as OpenCode does is refused.
 */
export function checkPermission(agent: unknown, command: string, project: string, session?: unknown): BashVerdict {
  const record = agent && typeof agent === "object" ? (agent as Record<string, unknown>) : {};
  const agentName = typeof record.name === "string" ? record.name : "unknown";
  const agentRules = readRules(record.permission);
  const sessionPermission =
    session && typeof session === "object" ? (session as Record<string, unknown>).permission : undefined;
  const sessionRules = sessionPermission === undefined ? [] : readRules(sessionPermission);
  if (!agentRules || !sessionRules) {
    return refuse(`the permission rules of the agent "${agentName}" could not be read, so ${NO_ASKING}`);
  }
  if (!path.isAbsolute(project)) return refuse(`the project folder is not known, so ${NO_ASKING}`);
  if (command.trim() === "") return refuse("the check is empty: give the command whose exit status 0 means done");
  const split_ = split(command);
  if ("refused" in split_)
    return refuse(`the check ${split_.refused}, which cannot be judged as OpenCode would: ${PLAIN}`);
  const context: Context = { agentName, rules: [...agentRules, ...sessionRules], project, source: command };
  for (const simple of split_.commands) {
    const kind = refusedKind(simple, command);
    if (kind) return refuse(`the check ${kind}: ${kind.startsWith("changes folder") ? NAME_PATHS : PLAIN}`);
    for (const text of matchedTexts(simple, command)) {
      const action = decide("bash", text, context.rules);
      if (action === "deny") return refuse(`the agent "${agentName}" may not run "${text}": ${NO_ASKING}`);
      if (action === "ask")
        return refuse(`the agent "${agentName}" would be asked before running "${text}": ${NO_ASKING}`);
    }
    const paths = refusedPaths(simple, context);
    if (paths) return refuse(paths);
  }
  return { allowed: true };
}

const refuse = (why: string): BashVerdict => ({ allowed: false, why });
