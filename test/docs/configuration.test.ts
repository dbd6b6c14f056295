// The configuration's one source (src/config/options.ts) and what is made from it agree: the JSON Schema the package
// ships, the configuration page's table; a real JSON Schema validator (Ajv, draft 2020-12) accepts the page's example
// files (and the README's) and refuses a misspelt option and a bad value, and so does the plugin's own check.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { channelsTable, configJsonSchema, optionsTable, SCHEMA_FILE } from "../../src/config/json-schema.js";
import { parseJsonc } from "../../src/config/jsonc.js";
import { resolveConfiguration } from "../../src/config/resolve.js";
import { parseChannels } from "../../src/notices/channels.js";
import { betweenMarkers } from "../../scripts/markers.js";
import { tempFolder } from "../support/temp-folders.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const PAGE = readFileSync(join(ROOT, "docs", "configuration.md"), "utf8");
const shipped = JSON.parse(readFileSync(join(ROOT, SCHEMA_FILE), "utf8")) as {
  properties: Record<string, { properties?: Record<string, unknown> }>;
};

/** The page's example files: its json/jsonc blocks that carry a `$schema`. */
function exampleFiles(markdown: string): string[] {
  return [...markdown.matchAll(/^```jsonc?\n([\s\S]*?)^```/gm)]
    .map((m) => m[1]!)
    .filter((b) => b.includes('"$schema"'));
}

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  return ajv.compile(shipped);
}

/** A project folder whose `.opencode/todo-continuation.jsonc` holds `text`, read as the plugin reads it. */
function pluginReads(text: string) {
  const directory = tempFolder("project-");
  mkdirSync(join(directory, ".opencode"));
  writeFileSync(join(directory, ".opencode", "todo-continuation.jsonc"), text);
  return resolveConfiguration({
    env: { HOME: directory, XDG_CONFIG_HOME: join(directory, "none") },
    directory,
    files: true,
  });
}

describe("the configuration's schema", () => {
  it("ships as generated from the option table (npm run docs:config)", () => {
    expect(shipped).toEqual(configJsonSchema());
  });

  it("and the configuration page's table is generated from it too", () => {
    expect(betweenMarkers(PAGE, "options")).toBe(optionsTable());
  });

  it("and the page's table of a notify channel's keys from the channel's schema", () => {
    expect(betweenMarkers(PAGE, "channels")).toBe(channelsTable());
    const rows = [...channelsTable().matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
    const items = (shipped.properties.notify as unknown as { items: { anyOf: Array<{ properties: object }> } }).items;
    const schemaKeys = new Set(items.anyOf.flatMap((channel) => Object.keys(channel.properties)));
    expect(rows.sort()).toEqual([...schemaKeys].sort());
  });

  it("describes each channel as the plugin checks it: a wrong one refused by both, a right one by neither", () => {
    const validate = validator();
    const right = {
      type: "ntfy",
      url: "https://ntfy.example.com/t",
      token: { env: "T" },
      priority: 5,
      kinds: ["done"],
    };
    const cases: Array<[object, string, string]> = [
      [{ ...right, priority: 7 }, "/notify/0/priority", "priority = 7; allowed: an integer from 1 to 5"],
      [{ ...right, type: "slak" }, "/notify/0/type", 'type = "slak"; allowed: webhook, ntfy, slack, discord'],
      [{ ...right, kinds: [] }, "/notify/0/kinds", "kinds = []; allowed: a non-empty array of question"],
      [{ ...right, prioirty: 1 }, "/notify/0", "prioirty = (hidden); allowed: a key of a ntfy channel"],
      [{ ...right, url: "ftp://ntfy.example.com/t" }, "/notify/0/url", 'url = "ftp://ntfy.example.com/…"'],
    ];
    for (const [channel, where, problem] of cases) {
      expect(validate({ notify: [channel] }), JSON.stringify(channel)).toBe(false);
      expect(validate.errors!.map((e) => e.instancePath)).toContain(where);
      const { problems } = parseChannels([channel], { T: "tk" });
      expect(problems).toEqual([expect.stringContaining(problem)]);
    }
    expect(validate({ notify: [right] }), JSON.stringify(validate.errors)).toBe(true);
    expect(parseChannels([right], { T: "tk" }).problems).toEqual([]);
  });

  it("documents every key of the schema on the configuration page, and nothing else", () => {
    const tableKeys = [...optionsTable().matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
    const pageKeys = [...(betweenMarkers(PAGE, "options") ?? "").matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
    const schemaKeys = Object.entries(shipped.properties)
      .filter(([key]) => key !== "$schema")
      .flatMap(([key, value]) => (value.properties ? Object.keys(value.properties).map((k) => `${key}.${k}`) : [key]));
    expect(pageKeys.sort()).toEqual(schemaKeys.sort());
    expect(tableKeys.sort()).toEqual(schemaKeys.sort());
  });

  it("accepts the example files of the README and the configuration page, and the plugin reads them too", () => {
    const readme = exampleFiles(readFileSync(join(ROOT, "README.md"), "utf8"));
    const examples = [...readme, ...exampleFiles(PAGE)];
    expect(readme.length).toBeGreaterThan(0);
    expect(examples.length).toBeGreaterThan(readme.length);
    const validate = validator();
    for (const example of examples) {
      expect(validate(parseJsonc(example)), JSON.stringify(validate.errors)).toBe(true);
      expect(pluginReads(example).problems).toEqual([]);
    }
  });

  it.each([
    [{ countdownSecs: 3 }, "additionalProperties", "countdownSecs", "did you mean countdownSeconds?"],
    [{ maxContinuations: "many" }, "type", "/maxContinuations", "an integer from 1 to 100000"],
    [{ countdownSeconds: 7200 }, "maximum", "/countdownSeconds", "a number from 0 to 3600"],
    [{ tui: { cancelOnTyping: "yes please" } }, "type", "/tui/cancelOnTyping", "true or false"],
    // Strings an environment variable may carry are refused in a file, as the schema refuses them.
    [{ toast: "yes" }, "type", "/toast", 'toast = "yes"; allowed: true or false'],
    [{ countdownSeconds: "5" }, "type", "/countdownSeconds", 'countdownSeconds = "5"; allowed: a number from 0'],
    [{ tui: { cancelOnTyping: "no" } }, "type", "/tui/cancelOnTyping", "true or false"],
  ])("refuses %j, as the plugin does", (file, keyword, where, allowed) => {
    const validate = validator();
    expect(validate(file)).toBe(false);
    const error = validate.errors!.find((e: ErrorObject) => e.keyword === keyword)!;
    expect(error).toBeDefined();
    expect(`${error.instancePath} ${JSON.stringify(error.params)}`).toContain(where);
    const { problems, config } = pluginReads(JSON.stringify(file));
    expect(config).toBeUndefined();
    expect(problems.map((p) => p.text).join("\n")).toContain(allowed);
  });
});
