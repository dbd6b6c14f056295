// The shape of src/ that keeps it easy to live in, checked on every run: no import circle (type-only imports
// included), no file over 400 lines, no function over 80, every engine module with a test file named after it, and
// the folders importing only what the layout allows (docs/architecture.md "Layout").
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

function filesUnder(folder: string, suffix = ".ts"): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return filesUnder(path, suffix);
    return path.endsWith(suffix) && !path.endsWith(".d.ts") ? [path] : [];
  });
}

const sources = filesUnder(SRC);
const parsed = new Map(
  sources.map((file) => [file, ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)]),
);
const rel = (file: string) => relative(ROOT, file);

/** Every module of src/ a file imports or re-exports (type-only included). */
function importsOf(file: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const spec = (node.moduleSpecifier as ts.StringLiteral).text;
      if (spec.startsWith(".")) found.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const spec = (node.argument.literal as ts.StringLiteral).text;
      if (spec.startsWith(".")) found.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed.get(file)!);
  return found.filter((f) => parsed.has(f));
}

function cycles(): string[][] {
  const graph = new Map(sources.map((file) => [file, importsOf(file)]));
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const walk = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file)!) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next].map(rel));
      else if (!state.has(next)) walk(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of sources) if (!state.has(file)) walk(file);
  return found;
}

/** Functions, methods and arrow functions with their length in lines (a nested one counts in its parent too). */
function functionLengths(file: string): Array<{ name: string; lines: number }> {
  const source = parsed.get(file)!;
  const found: Array<{ name: string; lines: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as { name?: ts.Node }).name;
      const name = named ? named.getText() : `<anonymous at line ${start + 1}>`;
      found.push({ name: `${rel(file)} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the layout of src/", () => {
  it("has no import circle, type-only imports included", () => {
    expect(cycles()).toEqual([]);
  });

  it("has no file over 400 lines", () => {
    const long = sources
      .map((file) => ({ file: rel(file), lines: readFileSync(file, "utf8").split("\n").length }))
      .filter((f) => f.lines > 400);
    expect(long).toEqual([]);
  });

  it("has no function over 80 lines", () => {
    const long = sources.flatMap(functionLengths).filter((f) => f.lines > 80);
    expect(long).toEqual([]);
  });

  it("keeps core/ pure and store/ apart from OpenCode, and the backends apart from each other", () => {
    const offending = sources.flatMap((file) => {
      const from = rel(file);
      return importsOf(file)
        .map(rel)
        .filter(
          (to) =>
            (from.startsWith("src/core/") && !to.startsWith("src/core/")) ||
            (from.startsWith("src/store/") && /^src\/(engine|host|plugin|service|cli|tui)\//.test(to)) ||
            (from.startsWith("src/store/sqlite/") && to.startsWith("src/store/pg/")) ||
            (from.startsWith("src/store/pg/") && to.startsWith("src/store/sqlite/")) ||
            (from.startsWith("src/store/changes/") && /^src\/store\/(sqlite|pg)\//.test(to)),
        )
        .map((to) => `${from} → ${to}`);
    });
    expect(offending).toEqual([]);
  });

  it("gives every engine module a test file named after it", () => {
    const modules = filesUnder(join(SRC, "engine")).map((file) => relative(join(SRC, "engine"), file));
    const tests = new Set(
      filesUnder(join(ROOT, "test", "engine")).map((f) => relative(join(ROOT, "test", "engine"), f)),
    );
    const untested = modules.filter((m) => !tests.has(m.replace(/\.ts$/, ".test.ts")));
    expect(untested).toEqual([]);
  });
});
