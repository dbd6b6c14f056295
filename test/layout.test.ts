// The shape of src/ that keeps it easy to live in, checked on every run: no import circle, no file over 400 lines, no
// function over 80, every engine module with a test file named after it, and the folders importing only what the
// layout allows (docs/architecture.md "Layout").
// A circle counts every way one module names another: `import()` too (a module loaded lazily is still one this one
// depends on, and the CLI's commands and actions once made eight circles that way, unseen), and type-only imports too:
// erased at run time, they still tie the two files' meanings together, so neither can be read, moved or split without
// the other, and a type that both sides need belongs to one of them (or below both), not to each other.
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

/**
 * The module specifiers a source names: import and `export … from` declarations (type-only included), `import("…")`
 * calls with a literal specifier (a lazily loaded module is still a module this one depends on), and `import("…").T`
 * in a type.
 */
function specifiersOf(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      found.push((node.moduleSpecifier as ts.StringLiteral).text);
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      found.push((node.argument.literal as ts.StringLiteral).text);
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every module of src/ a file imports, loads or re-exports, as `specifiersOf` reads them. */
function importsOf(file: string): string[] {
  const modules = specifiersOf(parsed.get(file)!)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
  return [...new Set(modules)].filter((f) => parsed.has(f));
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
  it("has no import circle, import() and type-only imports included", () => {
    expect(cycles()).toEqual([]);
  });

  it("sees every way a module names another: import, import type, export … from, import(), import().T", () => {
    const source = ts.createSourceFile(
      "named.ts",
      [
        'import { a } from "./a.js";',
        'import type { B } from "./b.js";',
        'export { c } from "./c.js";',
        'export type * from "./d.js";',
        'const e = async () => (await import("./e.js")).e;',
        'type F = import("./f.js").F;',
        "const g = (name: string) => import(name);",
      ].join("\n"),
      ts.ScriptTarget.Latest,
      true,
    );
    expect(specifiersOf(source)).toEqual(["./a.js", "./b.js", "./c.js", "./d.js", "./e.js", "./f.js"]);
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
            (from.startsWith("src/notices/") && !/^src\/(core|notices)\/|^src\/config\/zod\.ts$/.test(to)) ||
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

// ── the engine's path and its owners ───────────────────────────────────────────────────────────────────────────────

/**
 * The engine's folders, highest first: a folder imports only folders below it, so the path of one idle never goes back
 * and forth between two of them. Events come in at `see/` and are handed down; `deliver/` runs the guards of `decide/`
 * once more before a prompt; `wait/` holds what counts down or queues; `read/` asks OpenCode; `memory/` is what this
 * process remembers of its sessions. The engine's root files are either infrastructure (importing no folder, so any
 * folder may use them) or the composition (which may import everything and is imported by no folder).
 */
const ENGINE_FOLDERS = ["see", "deliver", "decide", "wait", "read", "memory"];
const ENGINE = join(SRC, "engine");

function engineFolderOf(file: string): string | undefined {
  const inEngine = relative(ENGINE, file);
  if (inEngine.startsWith("..")) return undefined;
  return inEngine.includes("/") ? inEngine.split("/")[0] : "";
}

const SESSION_MEMORY = join(ENGINE, "memory", "session-memory.ts");

/** The files that import `target`, directly or through others: only they can name or hold what it declares. */
function importersOf(target: string): string[] {
  const imports = new Map(sources.map((file) => [file, importsOf(file)]));
  const found = new Set([target]);
  for (const file of found) for (const [other, its] of imports) if (its.includes(file)) found.add(other);
  return sources.filter((file) => found.has(file));
}

/**
 * The program typed: rules about who writes what need to know what a name refers to. Typing is most of this file's
 * time, so its roots are only the files those rules look at (what they import comes with them).
 */
function typedProgram() {
  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
  const roots = [...importersOf(SESSION_MEMORY), join(SRC, "store", "types.ts")];
  const program = ts.createProgram(roots, { ...options, noEmit: true });
  return { program, checker: program.getTypeChecker() };
}
let typed: ReturnType<typeof typedProgram> | undefined;
const program = () => (typed ??= typedProgram());

/** `x.p = …`, `x.p++`, `x.p += …`, `delete x.p`: the property accesses a statement writes. */
function writtenProperties(source: ts.SourceFile): ts.PropertyAccessExpression[] {
  const found: ts.PropertyAccessExpression[] = [];
  const target = (node: ts.Expression) => {
    if (ts.isPropertyAccessExpression(node)) found.push(node);
  };
  const visit = (node: ts.Node) => {
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
    )
      target(node.left);
    else if (
      (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
      [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(node.operator)
    )
      target(node.operand);
    else if (ts.isDeleteExpression(node)) target(node.expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the engine's path and its owners", () => {
  it("imports its folders one way only: each folder only those below it", () => {
    const rank = (folder: string) => ENGINE_FOLDERS.indexOf(folder);
    const engineFiles = sources.filter((file) => engineFolderOf(file) !== undefined);
    const rootImportsFolders = (file: string) => importsOf(file).some((to) => (engineFolderOf(to) ?? "") !== "");
    const offending = engineFiles.flatMap((file) => {
      const from = engineFolderOf(file)!;
      return importsOf(file)
        .filter((to) => {
          const into = engineFolderOf(to);
          if (into === undefined || from === "") return false;
          if (into === "") return rootImportsFolders(to);
          return into !== from && (rank(into) === -1 || rank(from) === -1 || rank(into) < rank(from));
        })
        .map((to) => `${rel(file)} → ${rel(to)}`);
    });
    const unknown = engineFiles.map(engineFolderOf).filter((f) => f !== "" && rank(f!) === -1);
    expect({ offending, unknown: [...new Set(unknown)] }).toEqual({ offending: [], unknown: [] });
  });

  it("changes what it remembers of a session only in its owner, through its verbs", () => {
    const { program: p, checker } = program();
    const offending = importersOf(SESSION_MEMORY)
      .filter((file) => file !== SESSION_MEMORY)
      .flatMap((file) =>
        writtenProperties(p.getSourceFile(file)!)
          .filter((access) => {
            const type = checker.getTypeAtLocation(access.expression);
            const name = (type.aliasSymbol ?? type.getSymbol())?.getName();
            return name === "SessionMemory";
          })
          .map((access) => `${rel(file)}: ${access.getText()}`),
      );
    expect(offending).toEqual([]);
  });

  it("writes the look owed (recheck_at) only through its own change script, never in a session patch", () => {
    const { program: p, checker } = program();
    const types = p.getSourceFile(join(SRC, "store", "types.ts"))!;
    const update = types.statements.find(
      (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === "SessionUpdate",
    )!;
    const patchable = checker
      .getTypeAtLocation(update.name)
      .getProperties()
      .map((s) => s.getName());
    const owned = ["recheckAt", "owedSince"];
    // The columns themselves: declared, mapped, read and written whole.
    const allowed = [
      "store/changes/look-owed.ts",
      "store/schema.ts",
      "store/pg/schema.ts",
      "store/session-columns.ts",
      "store/sqlite/statements/sessions.ts",
    ];
    const writers = sources
      .filter((file) => !allowed.includes(relative(SRC, file)))
      .flatMap((file) => {
        const found: string[] = [];
        const visit = (node: ts.Node) => {
          if (
            (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) &&
            owned.includes(node.name.getText())
          )
            found.push(`${rel(file)}: ${node.getText()}`);
          ts.forEachChild(node, visit);
        };
        visit(parsed.get(file)!);
        return found;
      });
    expect({ inThePatch: patchable.filter((name) => owned.includes(name)), writers }).toEqual({
      inThePatch: [],
      writers: [],
    });
  });

  it("reads the database outside store/ only through named reads, never raw statements (q.)", () => {
    const offending = sources
      .filter((file) => !rel(file).startsWith("src/store/"))
      .flatMap((file) =>
        parsed
          .get(file)!
          .statements.filter(
            (s): s is ts.ImportDeclaration =>
              ts.isImportDeclaration(s) &&
              (s.moduleSpecifier as ts.StringLiteral).text.endsWith("store/script.js") &&
              !!s.importClause?.namedBindings &&
              ts.isNamedImports(s.importClause.namedBindings) &&
              s.importClause.namedBindings.elements.some((e) => (e.propertyName ?? e.name).text === "q"),
          )
          .map(() => rel(file)),
      );
    expect(offending).toEqual([]);
  });
});
