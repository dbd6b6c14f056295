// The `notify` option → the channels notices go to. Each channel is checked on its own: one that is wrong is named in
// one line (where it is, the key, the value without its secrets, what is allowed) and left out, and the others are
// kept, so that a mistyped URL in one channel loses no notice of another.
import { didYouMean } from "../core/nearest.js";
import {
  problem,
  readCommand,
  readHeaders,
  readHeaderSecret,
  readInteger,
  readKinds,
  readSecret,
  readStrings,
  readUrl,
  shown,
  type FieldReader,
} from "./channel-fields.js";
import { hostOf } from "./redact.js";
import { CHANNEL_TYPES, type Channel, type ChannelType } from "./types.js";

export const DEFAULT_TIMEOUT_MS = 10_000;

/** The headers a webhook delivery sets itself: a channel's own `headers` may not replace them. */
export const isReservedHeader = (name: string) =>
  name === "content-type" || name === "content-length" || name === "host" || name.startsWith("x-todo-continuation-");

const COMMON_KEYS = ["type", "name", "kinds", "timeoutMs"];
const TYPE_KEYS: Record<ChannelType, string[]> = {
  webhook: ["url", "secret", "headers"],
  ntfy: ["url", "token", "priority", "tags"],
  slack: ["url"],
  discord: ["url"],
  command: ["command", "args"],
};

/** A channel's name: stored with each delivery and shown by doctor, so plain and short. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

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

/** The fields of one entry whose type is known, as a channel; undefined when a problem was found. */
function channelOf(type: ChannelType, name: string, r: FieldReader): Channel | undefined {
  const keys = [...COMMON_KEYS, ...TYPE_KEYS[type]];
  for (const key of Object.keys(r.raw))
    if (!keys.includes(key))
      problem(r, key, "(hidden)", `a key of a ${type} channel: ${keys.join(", ")}${didYouMean(key, keys)}`);
  if (!NAME.test(name))
    problem(
      r,
      "name",
      shown(r.raw.name),
      "letters, digits, '_', '.' and '-', at most 64, starting with a letter or digit",
    );
  const channel = fieldsOf(type, r);
  const base = {
    name,
    kinds: readKinds(r),
    timeoutMs: readInteger(r, "timeoutMs", 100, 600_000) ?? DEFAULT_TIMEOUT_MS,
  };
  if (r.problems.length > 0 || !channel) return undefined;
  return { ...base, ...channel } as Channel;
}

type Fields<C> = C extends Channel ? Omit<C, "name" | "kinds" | "timeoutMs"> : never;

function fieldsOf(type: ChannelType, r: FieldReader): Fields<Channel> | undefined {
  const optional = <T extends object>(fields: T) =>
    Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as T;
  if (type === "command") {
    const command = readCommand(r);
    const args = readStrings(r, "args", "an array of strings (the program's arguments; no shell)");
    return command === undefined ? undefined : optional({ type, command, args });
  }
  const url = readUrl(r);
  if (type === "webhook") {
    const fields = { secret: readSecret(r, "secret"), headers: readHeaders(r, isReservedHeader) };
    return url === undefined ? undefined : optional({ type, url, ...fields });
  }
  if (type === "ntfy") {
    const token = readHeaderSecret(r, "token");
    const priority = readInteger(r, "priority", 1, 5);
    const tags = readStrings(r, "tags", "an array of tags (words or emoji short codes, no commas)", (tag) =>
      /^[^,\r\n]+$/.test(tag.trim()),
    );
    return url === undefined ? undefined : optional({ type, url, token, priority, tags: tags?.map((t) => t.trim()) });
  }
  return url === undefined ? undefined : { type, url };
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
  const names = namesOf(raw);
  const channels: Channel[] = [];
  const problems: string[] = [];
  const owner = new Map<string, number>();
  raw.forEach((entry, i) => {
    const where = `notify[${i}]${names[i] !== undefined ? ` (${names[i]})` : ""}`;
    const type = typeOf(entry);
    if (!isObject(entry) || !type) {
      const value = isObject(entry) ? shown(entry.type ?? "(missing)") : shown(entry);
      const key = isObject(entry) ? "type" : "";
      const near = isObject(entry) && typeof entry.type === "string" ? didYouMean(entry.type, CHANNEL_TYPES) : "";
      const allowed = isObject(entry) ? `${CHANNEL_TYPES.join(", ")}${near}` : "an object with a type";
      problems.push(`${where}${key ? `: ${key}` : ""} = ${value}; allowed: ${allowed}`);
      return;
    }
    const r: FieldReader = { raw: entry, env, directory, problems: [] };
    const name = names[i] ?? "";
    if (owner.has(name))
      problem(r, "name", shown(name), `a name no other channel has (notify[${owner.get(name)}] has it)`);
    else if (name) owner.set(name, i);
    const channel = channelOf(type, name, r);
    if (channel) channels.push(channel);
    else problems.push(`${where}: ${r.problems.join(" · ")}`);
  });
  return { channels, problems };
}

/** A channel in one line without its secrets, for logs and doctor: `ntfy ntfy.example.com/…`, `command notify-send`. */
export function describeChannel(channel: Channel): string {
  if (channel.type === "command") return `command ${channel.command}`;
  return `${channel.type} ${hostOf(channel.url) ?? "(no host)"}/…`;
}
