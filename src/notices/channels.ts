// The `notify` option → the channels notices go to. Each channel is checked on its own, by the option's own schema
// (channel-schema.ts) and then against the environment (channel-environment.ts): one that is wrong is named in one line
// (where it is, the key, the value without its secrets, what is allowed) and left out, and the others are kept, so
// that a mistyped URL in one channel loses no notice of another.
import type * as z from "zod";
import { didYouMean } from "../core/nearest.js";
import { DEFAULT_NOTICE_KINDS, NOTICE_KINDS, type NoticeKind } from "../core/notices.js";
import { resolvedFields, shown, type ChannelEnvironment } from "./channel-environment.js";
import { channelSchema, DEFAULT_TIMEOUT_MS, keysOf } from "./channel-schema.js";
import { hostOf, isObject, shownUrl } from "./redact.js";
import { CHANNEL_TYPES, type Channel, type ChannelType } from "./types.js";

const typeOf = (entry: unknown): ChannelType | undefined =>
  isObject(entry) && CHANNEL_TYPES.includes(entry.type as ChannelType) ? (entry.type as ChannelType) : undefined;

/**
 * Each entry's name: its own, or its type's — `ntfy`, then `ntfy-2`, `ntfy-3` for the second and third without a name,
 * skipping names another channel has. Counted over every entry of the type, a wrong one too, so that a channel that
 * becomes wrong does not rename the ones after it (their deliveries are stored under their names).
 */
function namesOf(entries: unknown[]): Array<string | undefined> {
  const given = entries.map((e) => (isObject(e) && typeof e.name === "string" ? e.name : undefined));
  const taken = new Set(given.filter((n) => n !== undefined));
  const count = new Map<ChannelType, number>();
  return entries.map((entry, i) => {
    const type = typeOf(entry);
    if (given[i] !== undefined || !type || (isObject(entry) && entry.name !== undefined)) return given[i];
    let n = count.get(type) ?? 0;
    let name: string;
    do name = ++n === 1 ? type : `${type}-${n}`;
    while (taken.has(name));
    count.set(type, n);
    taken.add(name);
    return name;
  });
}

const SECRET_KEYS = new Set(["secret", "token", "headers"]);

/** What a problem may show of a key's value: never a secret, a URL as its scheme and host. */
function shownValue(key: string, entry: Record<string, unknown>): string {
  const value = entry[key.split(".")[0]!];
  if (value === undefined) return "(missing)";
  if (SECRET_KEYS.has(key.split(".")[0]!)) return "(hidden)";
  if (key === "url")
    return typeof value === "string" ? `"${shownUrl(value)}"` : isObject(value) ? "(hidden)" : shown(value);
  return shown(value);
}

/** The order a channel's problems are listed in: an unknown key, its name, its type's own keys, the others. */
const rank = (key: string) => (key === "" ? -1 : key === "name" ? 0 : ["kinds", "timeoutMs"].includes(key) ? 2 : 1);

/** The schema's issues with one entry, one problem per key: `key = value; allowed: …`. */
function problemsOf(issues: readonly z.core.$ZodIssue[], entry: Record<string, unknown>, type: ChannelType): string[] {
  const found: Array<{ key: string; line: string }> = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const keys = keysOf(type);
      for (const key of issue.keys)
        found.push({
          key: "",
          line: `${key} = (hidden); allowed: a key of a ${type} channel: ${keys.join(", ")}${didYouMean(key, keys)}`,
        });
      continue;
    }
    const [first, second] = issue.path.map(String);
    const key = first === "headers" && second !== undefined ? `headers.${second}` : first!;
    if (!found.some((f) => f.key === key))
      found.push({ key, line: `${key} = ${shownValue(key, entry)}; allowed: ${issue.message}` });
  }
  return found.sort((a, b) => rank(a.key) - rank(b.key)).map((f) => f.line);
}

/** A channel the schema and the environment accepted, its defaults filled. */
function channelOf(type: ChannelType, name: string, fields: Record<string, unknown>): Channel {
  const kinds = fields.kinds as NoticeKind[] | undefined;
  const tags = fields.tags as string[] | undefined;
  const channel = {
    ...fields,
    type,
    name,
    kinds: kinds ? NOTICE_KINDS.filter((k) => kinds.includes(k)) : [...DEFAULT_NOTICE_KINDS],
    timeoutMs: fields.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    tags: tags?.map((t) => t.trim()),
  };
  return Object.fromEntries(Object.entries(channel).filter(([, v]) => v !== undefined)) as unknown as Channel;
}

export interface ParsedChannels {
  channels: Channel[];
  /** One line per channel left out: `notify[1] (ntfy-2): url = "ftp://example.com/…"; allowed: …`. */
  problems: string[];
}

/**
 * The `notify` option's channels, each checked: the valid ones, and a problem line for each one left out. `env` gives
 * the secrets written as `{ "env": "NAME" }` and the PATH commands are looked for on; `directory` is what a relative
 * command path is relative to.
 */
export function parseChannels(raw: unknown, env = process.env, directory = process.cwd()): ParsedChannels {
  if (raw === undefined || raw === null) return { channels: [], problems: [] };
  if (!Array.isArray(raw)) return { channels: [], problems: [`notify = ${shown(raw)}; allowed: an array of channels`] };
  const environment: ChannelEnvironment = { env, directory };
  const names = namesOf(raw);
  const channels: Channel[] = [];
  const problems: string[] = [];
  const owner = new Map<string, number>();
  raw.forEach((entry, i) => {
    const where = `notify[${i}]${names[i] !== undefined ? ` (${names[i]})` : ""}`;
    const parsed = channelSchema().safeParse(entry);
    const type = typeOf(entry);
    if (!isObject(entry) || !type) {
      // The schema's one issue then: not an object, or no type it knows.
      const issue = parsed.error!.issues[0]!;
      const said = isObject(entry) ? `: type = ${shown(entry.type ?? "(missing)")}` : ` = ${shown(entry)}`;
      problems.push(`${where}${said}; allowed: ${issue.message}`);
      return;
    }
    const found = parsed.success ? [] : problemsOf(parsed.error.issues, entry, type);
    const name = names[i] ?? "";
    if (owner.has(name))
      found.unshift(`name = ${shown(name)}; allowed: a name no other channel has (notify[${owner.get(name)}] has it)`);
    else if (name) owner.set(name, i);
    const fields = parsed.success ? resolvedFields(parsed.data, environment, found) : {};
    if (found.length > 0) problems.push(`${where}: ${found.join(" · ")}`);
    else channels.push(channelOf(type, name, fields));
  });
  return { channels, problems };
}

/** A channel in one line without its secrets, for logs and doctor: `ntfy ntfy.example.com/…`, `command notify-send`. */
export function describeChannel(channel: Channel): string {
  if (channel.type === "command") return `command ${channel.command}`;
  return `${channel.type} ${hostOf(channel.url) ?? "(no host)"}/…`;
}
