// One channel of the `notify` option as a zod schema, key by key: its type and range, what a problem says is allowed,
// and what it means. The option's schema (config/options.ts) is an array of it, so the JSON Schema the package ships
// and the configuration page describe channels from here, and channels.ts checks each entry with it before it looks at
// what no schema can know (an environment variable that is set, a program on PATH: channel-environment.ts).
import type * as z from "zod";
import { didYouMean } from "../core/nearest.js";
import { NOTICE_KINDS } from "../core/notices.js";
import { zod } from "../config/zod.js";
import { CHANNEL_TYPES, type ChannelType } from "./types.js";

export const DEFAULT_TIMEOUT_MS = 10_000;

/** The headers a webhook delivery sets itself: a channel's own `headers` may not replace them. */
const isReservedHeader = (name: string) =>
  name === "content-type" || name === "content-length" || name === "host" || name.startsWith("x-todo-continuation-");

const FROM_ENV = '{"env": "VARIABLE"} to read it from the environment';
const ENV_REF = `a string, or ${FROM_ENV}`;
const URL_ALLOWED = "an http:// or https:// URL";
const URL_OR_ENV = `${URL_ALLOWED}, or ${FROM_ENV}`;
/** What a header value sent as it is may hold: fetch refuses a line break, and anything past Latin-1. */
export const HEADER_VALUE = /^[\x20-\x7e\t]+$/;
export const HEADER_VALUE_ALLOWED = "printable ASCII on one line";
/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A channel's name: stored with each delivery and shown by doctor, so plain and short. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

type Z = typeof z;

/** Why a string is not a URL a channel can post to, or undefined when it is one. */
export function urlProblem(url: string): string | undefined {
  try {
    const { protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:" ? undefined : URL_ALLOWED;
  } catch {
    return `${URL_ALLOWED} (this one does not parse)`;
  }
}

/** What a `url` that is not one is told: why a string is not, else what it may be. */
const urlAllowed = (input: unknown) =>
  typeof input === "string" ? (urlProblem(input) ?? URL_ALLOWED) : input === undefined ? URL_ALLOWED : URL_OR_ENV;

const envRef = (z: Z, allowed: string) => z.strictObject({ env: z.string({ error: allowed }) }, { error: allowed });

/** A string that may be given as `{ "env": "NAME" }` instead, so that a secret need not sit in a file. */
function fromEnvOr(z: Z, text: z.ZodString, allowed: string) {
  return z.union([text, envRef(z, allowed)], { error: allowed });
}

/** An integer within a range, every problem of it said as the range. */
const integer = (z: Z, min: number, max: number) => {
  const error = `an integer from ${min} to ${max}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
};

const nonEmpty = (z: Z) => z.string({ error: ENV_REF }).regex(/\S/, { error: ENV_REF });

/** One key of a channel: which types take it, its schema, what a problem says is allowed, what it means. */
interface ChannelField {
  types: readonly ChannelType[];
  required?: true;
  default?: string;
  allowed: string;
  description: string;
  schema: (z: Z) => z.ZodType;
}

const KINDS_ALLOWED = `a non-empty array of ${NOTICE_KINDS.join(", ")}`;
const HEADERS_ALLOWED = `an object of header names to values (${ENV_REF})`;

/** Every key a channel may have besides its type: the ones every type takes, then each type's own. */
export const CHANNEL_FIELDS: Record<string, ChannelField> = {
  name: {
    types: CHANNEL_TYPES,
    default: "the type; `ntfy-2`, `ntfy-3`… for the second and third of a type",
    allowed: "letters, digits, '_', '.' and '-', at most 64, starting with a letter or digit",
    description:
      "Its name in `todo-continuation notices` and `doctor`, and in the database beside each delivery: keep it when you edit the channel.",
    schema: (z) => z.string().regex(NAME, { error: CHANNEL_FIELDS.name!.allowed }),
  },
  kinds: {
    types: CHANNEL_TYPES,
    default: "every kind but waiting",
    allowed: KINDS_ALLOWED,
    description: "The kinds of notice it receives.",
    schema: (z) =>
      z
        .array(
          z.enum(NOTICE_KINDS, { error: (issue) => KINDS_ALLOWED + didYouMean(String(issue.input), NOTICE_KINDS) }),
          {
            error: KINDS_ALLOWED,
          },
        )
        .min(1, { error: KINDS_ALLOWED }),
  },
  timeoutMs: {
    types: CHANNEL_TYPES,
    default: String(DEFAULT_TIMEOUT_MS),
    allowed: "an integer from 100 to 600000",
    description: "How long one delivery may take, the answer's body included.",
    schema: (z) => integer(z, 100, 600_000),
  },
  url: {
    types: ["webhook", "ntfy", "slack", "discord"],
    required: true,
    allowed: URL_ALLOWED,
    description:
      "Where deliveries go (an ntfy topic's URL, a Slack or Discord webhook); a secret, never shown past its host.",
    schema: (z) =>
      z.union(
        [
          z
            .string()
            .regex(/^https?:\/\//i)
            .check((ctx) => {
              const problem = urlProblem(ctx.value);
              if (problem) ctx.issues.push({ code: "custom", message: problem, input: ctx.value });
            }),
          envRef(z, URL_ALLOWED),
        ],
        { error: (issue) => urlAllowed(issue.input) },
      ),
  },
  secret: {
    types: ["webhook"],
    allowed: ENV_REF,
    description: "Signs each delivery (`x-todo-continuation-signature`: HMAC-SHA256 of the timestamp and the body).",
    schema: (z) => fromEnvOr(z, nonEmpty(z), ENV_REF),
  },
  headers: {
    types: ["webhook"],
    allowed: HEADERS_ALLOWED,
    description: "Headers of your own (an `Authorization` your receiver wants); they cannot replace the enforcer's.",
    schema: (z) =>
      z
        .record(z.string(), fromEnvOr(z, nonEmpty(z).regex(HEADER_VALUE, { error: HEADER_VALUE_ALLOWED }), ENV_REF), {
          error: HEADERS_ALLOWED,
        })
        .check((ctx) => {
          for (const name of Object.keys(ctx.value)) {
            const problem = !HEADER_NAME.test(name)
              ? "a header name (letters, digits and !#$%&'*+-.^_`|~)"
              : isReservedHeader(name.toLowerCase())
                ? "a header the enforcer does not set itself"
                : undefined;
            if (problem) ctx.issues.push({ code: "custom", message: problem, input: ctx.value, path: [name] });
          }
        }),
  },
  token: {
    types: ["ntfy"],
    allowed: ENV_REF,
    description: "An access token, sent as a bearer.",
    schema: (z) => fromEnvOr(z, nonEmpty(z).regex(HEADER_VALUE, { error: HEADER_VALUE_ALLOWED }), ENV_REF),
  },
  priority: {
    types: ["ntfy"],
    default: "each kind's own",
    allowed: "an integer from 1 to 5",
    description: "1 (min) to 5 (max).",
    schema: (z) => integer(z, 1, 5),
  },
  tags: {
    types: ["ntfy"],
    allowed: "an array of tags (words or emoji short codes, no commas)",
    description: "Added to each kind's own tag.",
    schema: (z) =>
      z
        .array(z.string({ error: CHANNEL_FIELDS.tags!.allowed }), { error: CHANNEL_FIELDS.tags!.allowed })
        .check((ctx) => {
          if (ctx.value.some((tag) => !/^[^,\r\n]+$/.test(tag.trim())))
            ctx.issues.push({ code: "custom", message: CHANNEL_FIELDS.tags!.allowed, input: ctx.value });
        }),
  },
  command: {
    types: ["command"],
    required: true,
    allowed: "a program's name or path",
    description: "The program run with the notice as JSON on its stdin (no shell): a name found on PATH, or a path.",
    schema: (z) => {
      const error = CHANNEL_FIELDS.command!.allowed;
      return z.string({ error }).regex(/\S/, { error });
    },
  },
  args: {
    types: ["command"],
    allowed: "an array of strings (the program's arguments; no shell)",
    description: "The program's arguments.",
    schema: (z) => {
      const error = CHANNEL_FIELDS.args!.allowed;
      return z.array(z.string({ error }), { error });
    },
  },
};

export const CHANNEL_TYPE_DESCRIPTIONS: Record<ChannelType, string> = {
  webhook: "A JSON POST of the notice itself, signed when `secret` is set.",
  ntfy: "A message published to an ntfy topic (`url` is the topic's URL).",
  slack: "A Slack incoming webhook.",
  discord: "A Discord webhook.",
  command: "A program run with the notice as JSON on its stdin (no shell).",
};

/** The keys a channel of `type` takes, in the order the documentation and a problem line list them. */
export const keysOf = (type: ChannelType): string[] => [
  "type",
  ...Object.keys(CHANNEL_FIELDS).filter((key) => CHANNEL_FIELDS[key]!.types.includes(type)),
];

function typeSchema(z: Z, type: ChannelType) {
  const shape: Record<string, z.ZodType> = { type: z.literal(type) };
  for (const key of keysOf(type).slice(1)) {
    const field = CHANNEL_FIELDS[key]!;
    const schema = field.schema(z).describe(field.description);
    shape[key] = field.required ? schema : schema.optional();
  }
  return z.strictObject(shape).describe(CHANNEL_TYPE_DESCRIPTIONS[type]);
}

let built: z.ZodType<Record<string, unknown>> | undefined;

/** What an entry that is not a channel of a known type is told. */
function notAChannel(issue: { code?: string; input?: unknown }): string {
  if (issue.code === "invalid_type") return "an object with a type";
  const type = (issue.input as { type?: unknown } | undefined)?.type;
  return CHANNEL_TYPES.join(", ") + (typeof type === "string" ? didYouMean(type, CHANNEL_TYPES) : "");
}

/** One channel, whatever its type: built the first time it is asked for (zod is loaded then). */
export function channelSchema(): z.ZodType<Record<string, unknown>> {
  if (built) return built;
  const z = zod();
  const [first, ...rest] = CHANNEL_TYPES.map((type) => typeSchema(z, type));
  built = z.discriminatedUnion("type", [first!, ...rest], { error: notAChannel });
  return built;
}
