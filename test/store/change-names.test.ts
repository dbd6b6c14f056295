// A change's name (Change.name: what the metrics, the logs and the tests' gates call it) is the name of the file in
// src/store/changes/ that builds it, and only those files build one: read from the sources, each `change(` call of a
// file that imports script.ts's `change`.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
const CHANGES = join(SRC, "store", "changes");

/** Changes whose name is not their file's yet, each with why (none: every change is named after its file). */
const EXEMPT: Record<string, string[]> = {};

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** The name a file calls script.ts's `change` by, if it imports it. */
function changeImportedAs(source: ts.SourceFile): string | undefined {
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!/(^|\/)script\.js$/.test(statement.moduleSpecifier.text)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    const found = bindings.elements.find((e) => (e.propertyName ?? e.name).text === "change" && !e.isTypeOnly);
    if (found) return found.name.text;
  }
  return undefined;
}

/** The first argument of each call of `change` in the file: its text when a string literal, else its source. */
function changesBuilt(file: string): Array<{ name: string; literal: boolean }> {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const local = changeImportedAs(source);
  if (!local) return [];
  const built: Array<{ name: string; literal: boolean }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === local) {
      const first = node.arguments[0];
      if (first && ts.isStringLiteralLike(first)) built.push({ name: first.text, literal: true });
      else built.push({ name: first?.getText(source) ?? "", literal: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return built;
}

describe("a change is named after its file", () => {
  it("every change of src/store/changes/ is named, as a string, after the file that builds it", () => {
    const wrong: string[] = [];
    let seen = 0;
    for (const file of filesUnder(CHANGES)) {
      const own = basename(file, ".ts");
      for (const { name, literal } of changesBuilt(file)) {
        seen++;
        if (!literal) wrong.push(`${relative(ROOT, file)}: change(${name}, …) is not named by a string`);
        else if (name !== own && !EXEMPT[basename(file)]?.includes(name))
          wrong.push(`${relative(ROOT, file)}: change "${name}" (it belongs in changes/${name}.ts)`);
      }
    }
    expect(wrong).toEqual([]);
    // The reading found the changes at all: one per file at least (arm, claim, adopt…).
    expect(seen).toBeGreaterThanOrEqual(10);
  });

  it("only src/store/changes/ builds changes", () => {
    const elsewhere = filesUnder(SRC)
      .filter((file) => !file.startsWith(CHANGES + "/") && changesBuilt(file).length > 0)
      .map((file) => relative(ROOT, file));
    expect(elsewhere).toEqual([]);
  });

  it("a file of src/store/changes/ only builds changes: it never runs one (each change is one transaction)", () => {
    const running = filesUnder(CHANGES).flatMap((file) => {
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const found: string[] = [];
      const visit = (node: ts.Node) => {
        if (
          ts.isCallExpression(node) &&
          ts.isPropertyAccessExpression(node.expression) &&
          ["change", "read"].includes(node.expression.name.text)
        )
          found.push(`${relative(ROOT, file)}: ${node.getText(source).slice(0, 60)}`);
        ts.forEachChild(node, visit);
      };
      visit(source);
      return found;
    });
    expect(running).toEqual([]);
  });
});
