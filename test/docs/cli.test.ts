// The CLI's pages agree with its one list of commands (src/cli/command-list.ts): docs/cli.md's command table has a row
// for every command that names each of its options and arguments, and no row for a command there is not; the README
// names every command on its line for docs/cli.md. A command added without its docs fails here.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS, commandPaths, registerCommands } from "../../src/cli/command-list.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const PAGE = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Each command as typed, with the options and arguments its definition gives it. */
function definedCommands(): Map<string, string[]> {
  const program = new Command();
  registerCommands(program);
  const found = new Map<string, string[]>();
  const walk = (command: Command, prefix: string) => {
    for (const sub of command.commands) {
      const path = `${prefix}${sub.name()}`;
      const options = sub.options.map((o) => o.long!);
      const args = sub.registeredArguments.map((a) => `<${a.name()}>`);
      found.set(path, [...args, ...options]);
      walk(sub, `${path} `);
    }
  };
  walk(program, "");
  return found;
}

/** The rows of docs/cli.md's "Commands" table: the commands each names (its first cell's code spans) and its text. */
function documentedRows(paths: string[]): Array<{ commands: string[]; unknown: string[]; text: string }> {
  const section = PAGE.slice(
    PAGE.indexOf("\n## Commands\n"),
    PAGE.indexOf("\n## ", PAGE.indexOf("\n## Commands\n") + 1),
  );
  const longestFirst = [...paths].sort((a, b) => b.length - a.length);
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((text) => {
      const firstCell = text.split(/(?<!\\)\|/)[1]!;
      // A code span that starts with a word and a space (or is one word) names a command: `stop <sessionID>`.
      const spans = [...firstCell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((s) => /^[a-z-]+( |$)/.test(s));
      const named = spans.map((span) => longestFirst.find((p) => span === p || span.startsWith(`${p} `)) ?? span);
      return {
        commands: named.filter((n) => paths.includes(n)),
        unknown: named.filter((n) => !paths.includes(n)),
        text,
      };
    });
}

describe("docs/cli.md", () => {
  const defined = definedCommands();
  const paths = commandPaths();
  const rows = documentedRows(paths);

  it("is checked against the same commands the CLI registers", () => {
    expect([...defined.keys()]).toEqual(paths);
  });

  it("has a row for every command, and none for a command there is not", () => {
    const documented = new Set(rows.flatMap((r) => r.commands));
    // A group is documented by its subcommands' rows (`servers add …`).
    const undocumented = paths.filter((p) => !documented.has(p) && !paths.some((q) => q.startsWith(`${p} `)));
    expect({ undocumented, unknown: rows.flatMap((r) => r.unknown) }).toEqual({ undocumented: [], unknown: [] });
  });

  it("names every option and argument of a command in its row", () => {
    const missing = paths.flatMap((path) => {
      const text = rows
        .filter((r) => r.commands.includes(path))
        .map((r) => r.text)
        .join("\n");
      return defined
        .get(path)!
        .filter((flag) => !new RegExp(`${flag}(?![\\w-])`).test(text))
        .map((flag) => `${path} ${flag}`);
    });
    expect(missing).toEqual([]);
  });
});

describe("the README", () => {
  it("names every command on its line for docs/cli.md", () => {
    const line = README.split("\n").find((l) => l.startsWith("| [cli.md](docs/cli.md) |"))!;
    const named = line
      .slice(line.indexOf(":") + 1)
      .replace(/\|\s*$/, "")
      .split(",")
      .map((name) => name.trim());
    expect(named.sort()).toEqual(COMMANDS.map((c) => c.name).sort());
  });
});
