// `doctor`'s look at notifications: the channels of the notify option the plugin of the project runs with (each wrong
// one named), and for each channel what the outbox says — its last success, its last error and when, what is pending
// or failed — beside the channels the database has notices of that this project does not configure. A channel is shown
// as its type and host (`describeChannel`); its URL's path, its token and its secret never appear, nor in the plugin's
// options that doctor shows.
import { isFileSource, type Resolution } from "../../config/resolve.js";
import { describeChannel, parseChannels } from "../../notices/channels.js";
import { shownChannels } from "../../notices/redact.js";
import type { Channel } from "../../notices/types.js";
import { DEFAULT_NOTICE_KINDS, NOTICE_KINDS } from "../../core/notices.js";
import type { PluginStatus } from "../../plugin/status-file.js";
import type { NoticeChannelState } from "../../store/notices/queries.js";
import { localTime, table } from "../format.js";
import type { PluginFinding } from "./doctor-plugin.js";

export interface NoticeSetup {
  /** Where the notify option came from: a file's path, "plugin options" (as of the plugin's last start), "default". */
  source: string;
  channels: Channel[];
  /** One line per channel left out, without its secrets. */
  problems: string[];
}

/**
 * The channels of the project: the plugin options' when the plugin said at its start that they came from there (doctor
 * cannot read opencode.json's plugin options itself), else the configuration files' as they are now. Secrets written
 * as `{ "env": … }` are read from doctor's own environment.
 */
export function noticeSetup(directory: string, status: PluginStatus | undefined, files: Resolution): NoticeSetup {
  const fromPlugin = status?.options.notify?.source === "plugin options";
  const raw = fromPlugin ? status!.options.notify!.value : files.merged.notify;
  const { channels, problems } = parseChannels(raw, process.env, directory);
  return { source: fromPlugin ? "plugin options" : files.sources.notify, channels, problems };
}

/** The plugin's status with its notify option shown without secrets: doctor prints the options it ran with. */
export function statusWithoutSecrets(status: PluginStatus | undefined): PluginStatus | undefined {
  const notify = status?.options.notify;
  if (!status || !notify) return status;
  return { ...status, options: { ...status.options, notify: { ...notify, value: shownChannels(notify.value) } } };
}

/** One channel as doctor shows it. `describes`: its type and host, null for a channel not configured here. */
export interface ChannelReport extends NoticeChannelState {
  describes: string | null;
  kinds: string[] | null;
}

const report = (channel: string, describes: string | null, kinds: string[] | null, s?: NoticeChannelState) => ({
  channel,
  describes,
  kinds,
  pending: s?.pending ?? 0,
  sent: s?.sent ?? 0,
  failed: s?.failed ?? 0,
  folded: s?.folded ?? 0,
  last_sent_at: s?.last_sent_at ?? null,
  last_error: s?.last_error ?? null,
  last_error_at: s?.last_error_at ?? null,
});

/** The configured channels in their order, then the channels only the database knows, by name. */
export function channelReports(setup: NoticeSetup, states: readonly NoticeChannelState[]): ChannelReport[] {
  const byName = new Map(states.map((s) => [s.channel, s]));
  const names = new Set(setup.channels.map((c) => c.name));
  return [
    ...setup.channels.map((c) => report(c.name, describeChannel(c), c.kinds, byName.get(c.name))),
    ...states
      .filter((s) => !names.has(s.channel))
      .sort((a, b) => a.channel.localeCompare(b.channel))
      .map((s) => report(s.channel, null, null, s)),
  ];
}

const WHERE =
  "the notify option in .opencode/todo-continuation.jsonc, the user's todo-continuation.jsonc or the plugin options; " +
  "see docs/notifications.md";

/** Each wrong channel (unless the plugin's own warnings already say it), then whether notices go anywhere. */
export function noticeFindings(
  setup: NoticeSetup,
  reports: readonly ChannelReport[],
  status: PluginStatus | undefined,
): PluginFinding[] {
  const findings: PluginFinding[] = setup.problems
    .filter((problem) => !status?.warnings.some((warning) => warning.endsWith(problem)))
    .map((problem) => ({ level: "warn", check: "notify", message: `left out: ${problem}` }));
  if (setup.channels.length === 0) {
    if (setup.problems.length === 0)
      findings.push({ level: "ok", check: "notifications", message: `off: no channel configured (${WHERE})` });
    return findings;
  }
  const from = isFileSource(setup.source) ? ` from ${setup.source}` : ` from the ${setup.source}`;
  const names = setup.channels.map((c) => c.name).join(", ");
  findings.push({
    level: "ok",
    check: "notifications",
    message: `${setup.channels.length} channel(s)${from}: ${names}`,
  });
  for (const r of reports)
    if (r.describes !== null && r.last_error_at !== null && r.last_error_at > (r.last_sent_at ?? 0))
      findings.push({
        level: "warn",
        check: "notifications",
        message: `${r.channel}: its last delivery failed (${localTime(r.last_error_at)}: ${r.last_error})`,
      });
  return findings;
}

const ALL_KINDS = NOTICE_KINDS.length;
const DEFAULT_KINDS = DEFAULT_NOTICE_KINDS.length;

/** The section's table: one line per channel. */
export function channelsTable(reports: readonly ChannelReport[]): string {
  return table(
    [
      { header: "CHANNEL", value: (r: ChannelReport) => r.channel },
      { header: "WHERE", value: (r) => r.describes ?? "(not configured here)", max: 40 },
      {
        header: "KINDS",
        value: (r) =>
          r.kinds === null
            ? ""
            : r.kinds.length === ALL_KINDS
              ? "all"
              : r.kinds.length === DEFAULT_KINDS && !r.kinds.includes("waiting")
                ? "default"
                : r.kinds.join(","),
      },
      { header: "LAST SENT", value: (r) => (r.last_sent_at === null ? "never" : localTime(r.last_sent_at)) },
      {
        header: "LAST ERROR",
        value: (r) => (r.last_error_at === null ? "" : `${localTime(r.last_error_at)} ${r.last_error}`),
        max: 70,
      },
      { header: "PENDING", value: (r) => String(r.pending), align: "right" },
      { header: "FAILED", value: (r) => String(r.failed), align: "right" },
    ],
    [...reports],
  );
}
