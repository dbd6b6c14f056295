// The JSON Schema of todo-continuation.json(c), made from the option table (options.ts): the file the package ships
// for editors (`$schema`), and the configuration page's table, so that neither can drift from what the code accepts.
import type * as z from "zod";
import { CHANNEL_FIELDS, CHANNEL_TYPE_DESCRIPTIONS } from "../notices/channel-schema.js";
import { CHANNEL_TYPES } from "../notices/types.js";
import { allowedOf, ENFORCER_OPTIONS, TUI_OPTIONS, type OptionSpec } from "./options.js";
import { zod } from "./zod.js";

export const SCHEMA_FILE = "todo-continuation.schema.json";
/** Where the schema will be once the package is published; until then, the installed package's file. */
export const SCHEMA_URL = `https://unpkg.com/opencode-todo-continuation/${SCHEMA_FILE}`;

function documented(spec: OptionSpec): z.ZodType {
  const withDefault = spec.default === undefined ? spec.schema.optional() : spec.schema.default(spec.default);
  const env = spec.env ? ` Environment variable: ${spec.env} (it wins over every file).` : "";
  return withDefault.describe(`${spec.description}${env}`);
}

function documentedObject(specs: Record<string, OptionSpec>) {
  return Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, documented(spec)]));
}

export function configJsonSchema(): Record<string, unknown> {
  const z = zod();
  const file = z
    .strictObject({
      $schema: z.string().optional().describe("The JSON Schema of this file, for editors."),
      ...documentedObject(ENFORCER_OPTIONS),
      tui: z
        .strictObject(documentedObject(TUI_OPTIONS))
        .optional()
        .describe("The TUI module's options (tui.json's plugin options win over these)."),
    })
    .describe("The options of opencode-todo-continuation, the durable todo-continuation enforcer for OpenCode.");
  const schema = z.toJSONSchema(file, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return { $id: SCHEMA_URL, title: "todo-continuation.json", ...schema };
}

export interface OptionRow {
  key: string;
  env: string;
  default: string;
  allowed: string;
  description: string;
}

function shownDefault(spec: OptionSpec): string {
  if (spec.shownDefault) return spec.shownDefault;
  return JSON.stringify(spec.default);
}

/** The rows of the configuration page's table, in the order of options.ts; TUI options as `tui.<key>`. */
export function optionRows(): OptionRow[] {
  const row = (key: string, spec: OptionSpec): OptionRow => ({
    key,
    env: spec.env ?? "",
    default: shownDefault(spec),
    allowed: allowedOf(spec),
    description: spec.description,
  });
  return [
    ...Object.entries(ENFORCER_OPTIONS).map(([key, spec]) => row(key, spec)),
    ...Object.entries(TUI_OPTIONS).map(([key, spec]) => row(`tui.${key}`, spec)),
  ];
}

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** The Markdown table the configuration page carries between its markers. */
export function optionsTable(): string {
  const lines = [
    "| option | environment variable | default | allowed | meaning |",
    "|---|---|---|---|---|",
    ...optionRows().map(
      (r) =>
        `| \`${r.key}\` | ${r.env ? `\`${r.env}\`` : ""} | ${r.default.startsWith("$") || r.default.startsWith("built") || r.default.startsWith("0 (") ? cell(r.default) : `\`${cell(r.default)}\``} | ${cell(r.allowed)} | ${cell(r.description)} |`,
    ),
  ];
  return lines.join("\n");
}

/** The configuration page's table of the keys of a `notify` channel, from the channel's schema (channel-schema.ts). */
export function channelsTable(): string {
  const every = (types: readonly string[]) => (types.length === CHANNEL_TYPES.length ? "every" : types.join(", "));
  const types = CHANNEL_TYPES.map((type) => `${type}: ${CHANNEL_TYPE_DESCRIPTIONS[type]}`).join(" ");
  return [
    "| key | channels | default | allowed | meaning |",
    "|---|---|---|---|---|",
    `| \`type\` | every | required | ${CHANNEL_TYPES.join(", ")} | ${cell(types)} |`,
    ...Object.entries(CHANNEL_FIELDS).map(
      ([key, f]) =>
        `| \`${key}\` | ${every(f.types)} | ${f.required ? "required" : cell(f.default ?? "")} | ${cell(f.allowed)} | ${cell(f.description)} |`,
    ),
  ].join("\n");
}
