// Every option of the enforcer, once: its type and range (a zod schema), its default, its environment variable and
// what it means. Validation, the shipped JSON Schema and the configuration page are all made from this table. Each
// schema is built the first time it is asked for (zod.ts: zod itself is loaded then).
import { isDeepStrictEqual } from "node:util";
import type * as z from "zod";
import { DEFAULT_PROMPT_TEMPLATE } from "../core/prompt.js";
import { channelSchema } from "../notices/channel-schema.js";
import { zod } from "./zod.js";

export interface OptionSpec<T extends z.ZodType = z.ZodType> {
  /** Built when first read. */
  readonly schema: T;
  /** The value when no source gives one; `undefined` for one that depends on the machine (said in `shownDefault`). */
  default: z.output<T> | undefined;
  /** How the documentation shows the default when the value itself would not help. */
  shownDefault?: string;
  env?: string;
  description: string;
  /** What an error says is allowed, where the schema alone would not say it well. */
  allowed?: string;
  /**
   * An array whose entries the schema describes but which are checked one by one where they are read (the `notify`
   * channels: notices/channels.ts), each wrong one named and left out, rather than the whole option refused.
   */
  entriesApart?: true;
}

type Z = typeof z;

/** An option whose schema `build` makes from zod the first time the schema is read. */
function option<T extends z.ZodType>(spec: Omit<OptionSpec<T>, "schema"> & { schema: (z: Z) => T }): OptionSpec<T> {
  const { schema: build, ...rest } = spec;
  let built: T | undefined;
  return Object.defineProperty(rest, "schema", {
    enumerable: true,
    get: () => (built ??= build(zod())),
  }) as OptionSpec<T>;
}
const integer = (min: number, max: number) => (z: Z) => z.number().int().min(min).max(max);
const number = (min: number, max: number) => (z: Z) => z.number().min(min).max(max);
/** A string with something in it; the pattern is also what the JSON Schema tells an editor. */
const text = (z: Z) => z.string().regex(/\S/, "a non-empty string");
const boolean = (z: Z) => z.boolean();

export const ENFORCER_OPTIONS = {
  databasePath: option({
    schema: text,
    default: undefined,
    shownDefault: "$XDG_DATA_HOME/opencode/todo-continuation.db (~/.local/share/… when unset)",
    env: "TODO_CONTINUATION_DB",
    description:
      "The SQLite file, or a postgres:// or postgresql:// URL. `~` is the home folder; a relative path is the project directory's.",
  }),
  enabled: option({
    schema: boolean,
    default: true,
    env: "TODO_CONTINUATION_ENABLED",
    description: "Master switch. Off, every idle is still judged and audited as `disabled`; nothing is sent.",
  }),
  countdownSeconds: option({
    schema: number(0, 3600),
    default: 2,
    env: "TODO_CONTINUATION_COUNTDOWN_SECONDS",
    description: "The wait between an eligible idle and the continuation, shown as a countdown.",
  }),
  resumeWindowSeconds: option({
    schema: number(0, 7 * 24 * 3600),
    default: 60,
    env: "TODO_CONTINUATION_RESUME_WINDOW_SECONDS",
    description:
      "A countdown found overdue after a restart fires if it is late by less than this; otherwise it expires.",
  }),
  wakeJitterSeconds: option({
    schema: number(0, 3600),
    default: 60,
    env: "TODO_CONTINUATION_WAKE_JITTER_SECONDS",
    description:
      "Sessions parked until a provider's limit resets wake spread over this many seconds after it (each session at its own offset), so that hundreds of them do not hit the provider in the same second.",
  }),
  maxParkHours: option({
    schema: number(0.25, 7 * 24),
    default: 24,
    env: "TODO_CONTINUATION_MAX_PARK_HOURS",
    description:
      "The longest a session waits parked: a `continue_later` asking for longer is refused, and a limit that has not lifted after this long (its backoff included) stops the session and tells you.",
  }),
  gracePeriodMs: option({
    schema: integer(0, 60_000),
    default: 500,
    description: "A user-message echo this soon after arming does not cancel the countdown.",
  }),
  errorCooldownMs: option({
    schema: integer(0, 3_600_000),
    default: 3000,
    description:
      "After a transient provider error, look again this much later (doubled per error in a row, capped at retryMaxMs; a longer retry-after wins).",
  }),
  skipAgents: option({
    schema: (z) => z.array(text(z)),
    default: ["plan", "compaction"],
    allowed: "an array of agent names",
    description: "Agents never continued.",
  }),
  continueChildSessions: option({
    schema: boolean,
    default: false,
    description:
      "Also continue child (subagent) sessions. Off by default: a child that went idle has handed its result to its parent.",
  }),
  stagnationLimit: option({
    schema: integer(1, 1000),
    default: 3,
    description:
      "Continuations since the last todo progress whose turns did no work either (no todo moved, no file changed) before stopping.",
  }),
  workWithoutProgressLimit: option({
    schema: integer(0, 1000),
    default: 8,
    description:
      'Continuations since the last todo progress whose turns changed the project\'s files (net of rewrites and undos) before stopping (`stagnation` with `detail.work: "files"`). 0: changed files never count, every such turn counts toward stagnationLimit.',
  }),
  maxContinuations: option({
    schema: integer(1, 100_000),
    default: 20,
    description: "Continuations since the last real user message before stopping (sent and unknown ones count).",
  }),
  maxContinuationCost: option({
    schema: number(0, 1_000_000),
    default: 0,
    description:
      "What continuations may cost per session since the last real user message, in the currency of the models' prices. 0: no cap.",
  }),
  maxContinuationTokens: option({
    schema: integer(0, 1e12),
    default: 0,
    description:
      "Tokens continuations may use per session since the last real user message (input, output, reasoning, cache). 0: no cap.",
  }),
  dailyContinuationCost: option({
    schema: number(0, 1_000_000),
    default: 0,
    description: "What every continuation of the database may cost per UTC day (a fleet shares it). 0: no cap.",
  }),
  pauseAfterUserMessage: option({
    schema: boolean,
    default: true,
    description:
      "After a real user message that follows one of our continuations, pause until the todos progress, the list is rewritten, or a resume.",
  }),
  unproductiveLimit: option({
    schema: integer(1, 1000),
    default: 1,
    description: "Continuations in a row answered with text only (no tool call, no edit) before stopping.",
  }),
  detectTextQuestions: option({
    schema: boolean,
    default: true,
    description:
      "An assistant message that ends by asking the user something in text holds the session like a question.",
  }),
  startTimeoutMs: option({
    schema: integer(500, 600_000),
    default: 10_000,
    description: "A sent continuation whose turn has not started by then counts as a failed attempt (`not_started`).",
  }),
  continueAfterCompaction: option({
    schema: boolean,
    default: false,
    description:
      "Continue right after a finished compaction (with the session's real agent) instead of waiting for activity.",
  }),
  verify: option({
    schema: (z) =>
      z
        .object({
          command: z.string().trim().min(1).max(4000),
          timeoutSeconds: z.number().min(1).max(86_400).default(600),
          maxRuns: z.number().int().min(1).max(100).default(5),
        })
        .strict()
        .nullable(),
    default: null,
    allowed: 'null, or { "command": "npm test", "timeoutSeconds": 600, "maxRuns": 5 }',
    description:
      "A command of yours that decides when the work is done: once every todo is closed after continuations, it runs in the session's folder (`/bin/sh -c`, with your rights, as a project's own plugins run); exit 0 is done, any other exit continues the session with its last lines, and `maxRuns` failures (or the same failure twice with no file changed) stop it. Killed with its children after `timeoutSeconds`.",
  }),
  prompt: option({
    schema: text,
    default: DEFAULT_PROMPT_TEMPLATE,
    shownDefault: "built in",
    description:
      "The template of the continuation text (its placeholders: see “The continuation prompt” on the configuration page).",
  }),
  maxConcurrentInjections: option({
    schema: integer(1, 1000),
    default: 8,
    description:
      "Continuations being delivered at once in one process: the guards' last reads, the prompt call and its outcome (each session is always one at a time; a fleet replica counts per server it follows).",
  }),
  maxRetries: option({
    schema: integer(0, 100),
    default: 3,
    description:
      "Retries in a row after a failed, unknown or never-started continuation, re-checks in a row after transient provider errors, and todo reads tried again in a row.",
  }),
  retryBaseMs: option({
    schema: integer(0, 3_600_000),
    default: 5000,
    description: "The first wait of the exponential backoff between those retries (then doubled, up to retryMaxMs).",
  }),
  retryMaxMs: option({
    schema: integer(0, 24 * 3_600_000),
    default: 60_000,
    description: "The cap of both backoffs (retries and the error cooldown).",
  }),
  leaseMs: option({
    schema: integer(500, 3_600_000),
    default: 15_000,
    description:
      "How long a process owns an armed countdown without renewing it; another process takes it over after that.",
  }),
  hostTimeoutMs: option({
    schema: integer(100, 600_000),
    default: 10_000,
    description: "The timeout of each read from OpenCode (todos, messages, session, agents).",
  }),
  promptTimeoutMs: option({
    schema: integer(100, 600_000),
    default: 30_000,
    description: "The timeout of the prompt call.",
  }),
  toast: option({
    schema: boolean,
    default: true,
    description: "Show the countdown toast every second, and the toast that says why continuation stopped.",
  }),
  quietTranscript: option({
    schema: boolean,
    default: true,
    description:
      "A continuation shows in the transcript as one line; the full prompt still reaches the model as a synthetic part.",
  }),
  notify: option({
    schema: (z) => z.array(channelSchema()),
    default: [],
    allowed: "an array of channels (see docs/notifications.md)",
    entriesApart: true,
    description:
      "Where notices go when a session needs you (a question, a budget spent, stuck, done, an error): webhook, ntfy, slack, discord or command channels, each with its kinds. A channel that is not valid is reported at start and left out; the others work.",
  }),
  dashboardUrl: option({
    schema: (z) =>
      z
        .string()
        .trim()
        .regex(/^https?:\/\/[^\s/?#]+[^\s?#]*$/, "an http:// or https:// address, such as http://127.0.0.1:7357")
        .transform((url) => url.replace(/\/+$/, ""))
        .nullable(),
    default: null,
    allowed: 'null, or the address the page is reached at, such as "http://127.0.0.1:7357"',
    description:
      "Where the page of every session (`todo-continuation dashboard`, or a service's `--listen`) is reached: each notice then links to its session's page there.",
  }),
  noticesPerHour: option({
    schema: integer(1, 1000),
    default: 4,
    description:
      "Notices one session may send per hour and channel; the rest wait, and are folded into the next one sent.",
  }),
  retentionDays: option({
    schema: number(0, 36_500),
    default: 0,
    shownDefault: "0 (keep everything)",
    env: "TODO_CONTINUATION_RETENTION_DAYS",
    description:
      "Delete settled history older than this many days, in the background (a minute after start, then every 6 h). 0: keep everything.",
  }),
  busyTimeoutMs: option({
    schema: integer(0, 60_000),
    default: 1000,
    description:
      "How long a write waits for another process's lock before the enforcer pauses (it blocks OpenCode meanwhile).",
  }),
  storeProbeMs: option({
    schema: integer(100, 3_600_000),
    default: 5000,
    description: "How often a paused enforcer tries its database again.",
  }),
};

export const TUI_KEY_PATTERN =
  /^(<leader>)?((ctrl|alt|shift|meta|super)\+)*([a-z0-9]|f\d{1,2}|escape|tab|space|return|backspace|delete|home|end|pageup|pagedown|up|down|left|right|[-.,;/\\[\]'`=])$/;

const KEY_ALLOWED = 'an OpenCode key such as "escape", "ctrl+y" or "<leader>k"';

/** The TUI module's own options: under `tui` in the file, or the object after its entry in tui.json. */
export const TUI_OPTIONS = {
  cancelKey: option({
    schema: (z) => z.string().refine((key) => TUI_KEY_PATTERN.test(key.trim().toLowerCase()), KEY_ALLOWED),
    default: "escape",
    allowed: KEY_ALLOWED,
    description: 'The key that cancels a running countdown: "escape", or any OpenCode key such as "ctrl+y".',
  }),
  cancelOnTyping: option({
    schema: boolean,
    default: true,
    description:
      "Typing into the prompt while a countdown runs cancels it too (you are about to write: nothing is sent).",
  }),
};

export type EnforcerOptionKey = keyof typeof ENFORCER_OPTIONS;
export type TuiOptionKey = keyof typeof TUI_OPTIONS;
export const ENFORCER_KEYS = Object.keys(ENFORCER_OPTIONS) as EnforcerOptionKey[];
export const TUI_KEYS = Object.keys(TUI_OPTIONS) as TuiOptionKey[];

/** What a schema allows, in words an error and the configuration page can show. */
export function allowedOf(spec: OptionSpec): string {
  if (spec.allowed) return spec.allowed;
  const schema = spec.schema as z.ZodType & { minValue?: number | null; maxValue?: number | null; isInt?: boolean };
  switch (schema.def.type) {
    case "boolean":
      return "true or false";
    case "number":
      return `${schema.isInt ? "an integer" : "a number"} from ${schema.minValue} to ${schema.maxValue}`;
    case "string":
      return "a non-empty string";
    default:
      return "see the configuration page";
  }
}

/**
 * Whether `value` is the option's default, whichever source gave it (a file may spell a default out). An option whose
 * default depends on the machine (`databasePath`) never is: its value is worth showing.
 */
export function isDefaultValue(key: string, value: unknown): boolean {
  if (!Object.hasOwn(ENFORCER_OPTIONS, key)) return false;
  const { default: fallback } = ENFORCER_OPTIONS[key as EnforcerOptionKey] as OptionSpec;
  return fallback !== undefined && isDeepStrictEqual(value, fallback);
}
