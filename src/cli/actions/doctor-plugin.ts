// `doctor`'s look at the plugin of one project: what the plugin said at its last start (its status file: version,
// on/off/in memory, problems, warnings, where each option came from) and what the configuration files say now (a file
// edited since OpenCode started is checked before the person restarts it).
import { isFileSource, resolveConfiguration, type Resolution } from "../../config/resolve.js";
import { userConfigFolder } from "../../config/files.js";
import { isDefaultValue } from "../../config/options.js";
import { readStatus, statusPath, type PluginStatus } from "../../plugin/status-file.js";
import { localTime } from "../format.js";

export interface PluginFinding {
  level: "ok" | "warn" | "fail";
  check: string;
  message: string;
}

export interface PluginExamination {
  directory: string;
  status: PluginStatus | undefined;
  /** The files as they are now (plugin options in opencode.json are the plugin's to read: not here). */
  files: Resolution;
  findings: PluginFinding[];
}

/**
 * Where OpenCode 1.18.33 names a server plugin it could not load: a spec it cannot resolve or import is published as a
 * `session.error` event, which the TUI shows as an error toast, and never logged; only a plugin function that throws
 * is logged ("failed to load plugin"), in its log folder.
 */
const OPENCODE_LOG = "~/.local/share/opencode/log/";

function statusFindings(directory: string, status: PluginStatus | undefined): PluginFinding[] {
  if (!status)
    return [
      {
        level: "warn",
        check: "plugin",
        message:
          `no OpenCode has loaded the plugin in ${directory} yet (no ${statusPath(directory)}): is it in the "plugin" ` +
          `list of opencode.json? OpenCode names one it cannot find or import in an error toast of its TUI ` +
          `("Failed to load plugin …"), not in its log; one whose function throws, in OpenCode's log (${OPENCODE_LOG})`,
      },
    ];
  const started = `${status.version}, started ${localTime(Date.parse(status.startedAt))} by process ${status.pid}`;
  const findings: PluginFinding[] =
    status.state === "on"
      ? [{ level: "ok", check: "plugin", message: `on (${started})` }]
      : status.problems.map((problem) => ({
          level: "fail" as const,
          check: "plugin",
          message: `${status.state === "off" ? "off" : "in memory"} (${started}): ${problem}`,
        }));
  for (const warning of status.warnings) findings.push({ level: "warn", check: "plugin", message: warning });
  return findings;
}

/** The files as they are now: each problem, else the files read; and a file ignored beside another, unless the plugin said it. */
function fileFindings(files: Resolution, status: PluginStatus | undefined): PluginFinding[] {
  const ignored: PluginFinding[] = files.warnings
    .filter((warning) => !status?.warnings.includes(warning))
    .map((warning) => ({ level: "warn", check: "config file", message: warning }));
  if (files.problems.length > 0)
    return [
      ...files.problems.map((problem): PluginFinding => ({
        level: "fail",
        check: "config file",
        message: `${isFileSource(problem.source) ? "" : `${problem.source}: `}${problem.text}`,
      })),
      ...ignored,
    ];
  const read =
    files.files.length > 0 ? files.files.join(", ") : `none (looked in .opencode/ and ${userConfigFolder()})`;
  return [{ level: "ok", check: "config file", message: read }, ...ignored];
}

/**
 * The `verify` command the plugin would run on a finished list, and where it came from, said plainly: it runs with the
 * person's rights, as a project's own OpenCode plugins do. From the plugin's last start when it said one (plugin
 * options are only its to read), else from the files as they are now.
 */
function verifyFinding(files: Resolution, status: PluginStatus | undefined): PluginFinding[] {
  const said = status?.options.verify;
  const verify = (said ? said.value : files.merged.verify) as { command?: unknown; timeoutSeconds?: unknown } | null;
  if (!verify || typeof verify.command !== "string") return [];
  const source = said ? said.source : files.sources.verify;
  const limit = typeof verify.timeoutSeconds === "number" ? `, killed after ${verify.timeoutSeconds} s` : "";
  return [
    {
      level: "ok",
      check: "verify",
      message:
        `a finished list is checked by ${JSON.stringify(verify.command)} (from ${source}), run in the session's ` +
        `folder with your rights${limit}`,
    },
  ];
}

export function examinePlugin(directory: string): PluginExamination {
  const status = readStatus(directory);
  // The CLI's own TODO_CONTINUATION_* variables are not OpenCode's: only the files are judged here.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("TODO_CONTINUATION_")),
  );
  const files = resolveConfiguration({ env, directory, files: true });
  const findings = [
    ...statusFindings(directory, status),
    ...fileFindings(files, status),
    ...verifyFinding(files, status),
  ];
  return { directory, status, files, findings };
}

/** The options the plugin runs with whose values are not the defaults (set or not), and where each came from. */
export function chosenOptions(
  status: PluginStatus | undefined,
): Array<{ option: string; value: string; source: string }> {
  if (!status) return [];
  return Object.entries(status.options)
    .filter(([option, { value, source }]) => source !== "default" && !isDefaultValue(option, value))
    .map(([option, { value, source }]) => ({ option, value: JSON.stringify(value), source }));
}

/** Why there is no database file yet, from what the plugin said: the finding that replaces the database's checks. */
export function missingDatabase(location: string, plugin: PluginExamination): PluginFinding {
  const { status } = plugin;
  const why = !status
    ? "no plugin has run here yet (see the plugin line)"
    : status.state === "on"
      ? `the plugin of ${plugin.directory} uses ${status.database}${status.database === location ? " and creates it at its first event" : ": is --db or TODO_CONTINUATION_DB pointing elsewhere?"}`
      : "the plugin is off or in memory (see the plugin line), so it created nothing";
  return { level: "fail", check: "database", message: `no database at ${location}: ${why}` };
}
