// docs/notifications.md holds what a receiver relies on: the webhook body's JSON Schema matches the notice the core
// makes, key for key; the example body is a real one; the Node snippet verifies a real signature; and every channel
// example parses as the plugin reads it.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../src/config/jsonc.js";
import { NOTICE_KINDS, type Notice } from "../../src/core/notices.js";
import { parseChannels } from "../../src/notices/channels.js";
import { webhookRequest } from "../../src/notices/webhook.js";
import { fullNotice, sampleNotice } from "../notices/sample-notice.js";
import { tempFolder } from "../support/temp-folders.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const PAGE = readFileSync(join(ROOT, "docs", "notifications.md"), "utf8");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The page's fenced blocks of a language. */
const blocks = (language: string) =>
  [...PAGE.matchAll(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```", "gm"))].map((m) => m[1]!);

const schema = JSON.parse(blocks("json").find((b) => b.includes("json-schema.org"))!) as {
  required: string[];
  properties: Record<string, { required?: string[]; properties?: Record<string, unknown>; enum?: string[] }> & {
    folded: { items: { required: string[]; properties: Record<string, { enum?: string[] }> } };
  };
};
// Formats are named for readers; the check here is of keys and types.
const validate = new Ajv2020({ allErrors: true, strict: true, validateFormats: false }).compile(schema);

const keys = (value: object) => Object.keys(value).sort();

describe("the webhook body's schema in docs/notifications.md", () => {
  it("accepts the notice of every kind, and one with every optional key", () => {
    for (const notice of [...NOTICE_KINDS.map((kind) => sampleNotice(kind)), fullNotice()])
      expect({ kind: notice.kind, errors: validate(notice) ? null : validate.errors }).toEqual({
        kind: notice.kind,
        errors: null,
      });
  });

  it("names every key of the notice, and requires exactly the ones it always has", () => {
    const full = fullNotice();
    expect(full.hint).toBeDefined();
    expect(full.session.title).toBeDefined();
    expect(keys(schema.properties)).toEqual(keys(full));
    expect(schema.required.sort()).toEqual(keys(full).filter((k) => k !== "hint" && k !== "folded"));
    for (const nested of ["session", "todos", "continuations", "goOn"] as const)
      expect({ nested, keys: keys(schema.properties[nested]!.properties!) }).toEqual({
        nested,
        keys: keys(full[nested]),
      });
    expect(schema.properties.session!.required).toEqual(["id"]);
    expect(keys(schema.properties.folded.items.properties)).toEqual(keys(full.folded![0]!));
    expect(schema.properties.kind!.enum).toEqual([...NOTICE_KINDS]);
    expect(schema.properties.folded.items.properties.kind!.enum).toEqual([...NOTICE_KINDS]);
  });

  it("refuses a body with a key missing, a key of another format, or an unknown kind", () => {
    const { id: _, ...withoutId } = sampleNotice();
    expect(validate(withoutId)).toBe(false);
    expect(validate({ ...sampleNotice(), extra: 1 })).toBe(false);
    expect(validate({ ...sampleNotice(), kind: "idle" })).toBe(false);
    expect(validate({ ...sampleNotice(), todos: { done: 1, open: 0 } })).toBe(false);
  });

  it("shows a real notice as the example body", () => {
    const example = blocks("json").find((b) => b.startsWith('{\n  "format": 1'))!;
    expect(JSON.parse(example) as Notice).toEqual(sampleNotice("budget"));
  });
});

describe("the Node snippet that verifies the signature", () => {
  it("accepts a real request and refuses a changed one", async () => {
    const file = join(tempFolder(), "verify.mjs");
    writeFileSync(file, blocks("js")[0]!);
    const { verified } = (await import(pathToFileURL(file).href)) as {
      verified: (secret: string, headers: Record<string, string>, body: Buffer) => boolean;
    };
    const channel = {
      type: "webhook" as const,
      name: "w",
      url: "https://x.example/",
      secret: "sek",
      kinds: [],
      timeoutMs: 1,
    };
    const request = webhookRequest(channel, sampleNotice());
    expect(verified("sek", request.headers, Buffer.from(request.body))).toBe(true);
    expect(verified("sek", request.headers, Buffer.from(request.body.replace("budget", "done")))).toBe(false);
    expect(verified("other", request.headers, Buffer.from(request.body))).toBe(false);
  });
});

describe("the page's channel examples", () => {
  it("parse as the plugin reads them, but for programs this machine does not have", () => {
    const examples = [...blocks("jsonc"), ...blocks("json").filter((b) => b.includes('"plugin"'))].map((b) => {
      const parsed = parseJsonc(b) as { notify?: unknown; plugin?: Array<[string, { notify: unknown }]> };
      return parsed.notify ?? parsed.plugin![0]![1].notify;
    });
    expect(examples.length).toBeGreaterThanOrEqual(6);
    const env = Object.fromEntries(
      [...PAGE.matchAll(/"env": "([A-Z_]+)"/g)].map((m) => [m[1]!, "https://set.example/in-the-environment"]),
    );
    for (const example of examples) {
      const { channels, problems } = parseChannels(example, { ...env, PATH: "/usr/bin:/bin" });
      for (const line of problems)
        expect(line).toMatch(/: command = "\/home\/you\/bin\/notice-popup"; allowed: an executable file/);
      expect(channels.length + problems.length).toBe((example as unknown[]).length);
    }
  });
});

describe("the README's channel example", () => {
  it("runs a program the page shows: one its scripts hand the notice to, or a wrapper it says to save", () => {
    const examples = [...README.matchAll(/^```jsonc\n([\s\S]*?)^```/gm)]
      .map((m) => parseJsonc(m[1]!) as { notify?: unknown })
      .filter((file) => file.notify !== undefined);
    expect(examples).toHaveLength(1);
    const shown = new Set([
      ...blocks("sh").flatMap((b) => [...b.matchAll(/^\s*exec (\S+)/gm)].map((m) => m[1]!)),
      ...[...PAGE.matchAll(/Save it as `([^`]+)`/g)].map((m) => basename(m[1]!)),
    ]);
    expect(shown).toContain("notify-send");
    const commands = (examples[0]!.notify as Array<{ type: string; command?: string }>)
      .filter((channel) => channel.type === "command")
      .map((channel) => basename(channel.command!));
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) expect(shown, `README's command channel runs ${command}`).toContain(command);
    const { problems } = parseChannels(examples[0]!.notify, { PATH: "/usr/bin:/bin" });
    for (const line of problems) expect(line).toMatch(/: command = "notify-send"; allowed: a program found on PATH/);
  });
});
