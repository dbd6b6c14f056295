// A channel's secrets kept out of every text it makes: a Slack or Discord webhook's path is its key, an ntfy topic's
// name is its password, and tokens, signing secrets and extra headers are credentials. What may be shown of a URL is
// its scheme and host.
import type { Channel } from "./types.js";

/** The host (and port) of a URL, or undefined when it is not one. */
export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A URL as it may be shown: `https://hooks.slack.com/…`. Not a URL: what precedes its first `/`, `?`, `#` or `@` (at
 * most 40 characters), so that a URL missing its scheme still shows the host it meant and never its path.
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.host) return `${parsed.protocol}//${parsed.host}/…`;
    return `${parsed.protocol}…`;
  } catch {
    const head = url.split(/[/?#@]/)[0]!.slice(0, 40);
    return head.length < url.length ? `${head}…` : head;
  }
}

/** The strings of a channel that must never be shown: its URL's path, query and user, its token, secret and headers. */
export function secretsOf(channel: Channel): string[] {
  const found: string[] = [];
  if (channel.type === "command") return found;
  found.push(channel.url);
  try {
    const url = new URL(channel.url);
    found.push(url.pathname + url.search, url.pathname, url.search, url.username, url.password);
  } catch {
    // A channel holds only URLs its parser accepted; an unparsable one is hidden whole above.
  }
  if (channel.type === "webhook") found.push(channel.secret ?? "", ...Object.values(channel.headers ?? {}));
  if (channel.type === "ntfy") found.push(channel.token ?? "");
  // Longest first, so that a URL is hidden whole before its path; short strings are not secrets worth a mangled
  // message (a path "/", a header value "1").
  return [...new Set(found)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
}

/** `text` with every secret of the channel replaced by `…`. */
export function redact(text: string, channel: Channel): string {
  let out = text;
  for (const secret of secretsOf(channel)) out = out.split(secret).join("…");
  return out;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isEnvReference = (value: unknown) =>
  isObject(value) && Object.keys(value).length === 1 && typeof value.env === "string";

/** Keys of a channel that hold no secret. */
const PLAIN_KEYS = new Set(["type", "name", "kinds", "timeoutMs", "priority", "tags", "command"]);

/** Every value hidden but the names of environment variables (a name is not the secret it holds). */
function hidden(value: unknown): unknown {
  if (isEnvReference(value)) return value;
  if (Array.isArray(value)) return value.map(hidden);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hidden(v)]));
  return "(hidden)";
}

/** The notify option as it may be shown: URLs as scheme and host, tokens, secrets, headers and arguments hidden. */
export function shownChannels(raw: unknown): unknown {
  if (!Array.isArray(raw)) return hidden(raw);
  return raw.map((entry) =>
    isObject(entry)
      ? Object.fromEntries(
          Object.entries(entry).map(([key, value]) => [
            key,
            PLAIN_KEYS.has(key) ? value : key === "url" && typeof value === "string" ? shownUrl(value) : hidden(value),
          ]),
        )
      : hidden(entry),
  );
}

const SECRET_KEYS = /^(secret|token|password|headers|authorization)$/i;
const URL_PATTERN = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;

/**
 * Any configuration value as a problem line may show it: URLs cut to scheme and host, and what a key named like a
 * credential holds hidden. For a value whose key is unknown (a misspelt `notify`) that a person still has to recognise.
 */
export function withoutSecrets(value: unknown): unknown {
  if (typeof value === "string") return URL_PATTERN.test(value) ? shownUrl(value) : value;
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (isObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        SECRET_KEYS.test(k) && !isEnvReference(v) ? "(hidden)" : withoutSecrets(v),
      ]),
    );
  return value;
}
