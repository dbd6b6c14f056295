// Every relative link of the documentation resolves: the file it names exists, and its #anchor is the slug GitHub
// makes of one of that file's headings. External links (https:, mailto:) are not fetched.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..");

/** The pages checked: the root's README, CONTRIBUTING and CHANGELOG, and every page of docs/. */
function pages(root = ROOT): string[] {
  const docs = join(root, "docs");
  const inDocs = existsSync(docs)
    ? readdirSync(docs)
        .filter((f) => f.endsWith(".md"))
        .map((f) => join(docs, f))
    : [];
  return [...["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].map((f) => join(root, f)), ...inDocs];
}

/** Markdown with its fenced code blocks and inline code spans blanked out: links in code are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "``");
}

/** GitHub's heading slug (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/`/g, "")
    .replace(/\*\*|__/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a page has: its headings' slugs (a repeated slug gets -1, -2… as on GitHub). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown).split("\n")) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

interface Broken {
  page: string;
  link: string;
  why: string;
}

/** Every relative link or #anchor of a page (its text as given, else as on disk) that does not resolve. */
function brokenLinks(page: string, text = readFileSync(page, "utf8"), root = ROOT): Broken[] {
  const broken: Broken[] = [];
  const links = [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  for (const link of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:, file:
    const [path, anchor] = link.split("#", 2) as [string, string | undefined];
    const target = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
    const where = relative(root, page);
    if (!existsSync(target)) {
      broken.push({ page: where, link, why: `no file ${relative(root, target)}` });
      continue;
    }
    if (anchor === undefined || statSync(target).isDirectory()) continue;
    if (!target.endsWith(".md")) {
      broken.push({ page: where, link, why: "an anchor into a file that is not markdown" });
      continue;
    }
    if (!anchors(readFileSync(target, "utf8")).has(anchor))
      broken.push({ page: where, link, why: `no heading in ${relative(root, target)} makes #${anchor}` });
  }
  return broken;
}

describe("links in the documentation", () => {
  it("GitHub's slugs: punctuation dropped, code and links read as their text", () => {
    expect(slug("The `todo-continuation` CLI")).toBe("the-todo-continuation-cli");
    expect(slug("5. It stopped, and you want to know why")).toBe("5-it-stopped-and-you-want-to-know-why");
    expect(slug("Runs 13–15: issues 21, 25 and 26 on one head (7663b05)")).toBe(
      "runs-1315-issues-21-25-and-26-on-one-head-7663b05",
    );
    expect([...anchors("# A\n## B\n## B\n```\n## not a heading\n```\n")]).toEqual(["a", "b", "b-1"]);
  });

  it("a missing file or heading is found", () => {
    const page = join(ROOT, "docs", "how-it-decides.md");
    const text = readFileSync(page, "utf8");
    expect(text).toContain("](configuration.md#options)");
    expect(
      brokenLinks(page, text.replace("](configuration.md#options)", "](configuration.md#no-such-heading)")),
    ).toEqual([
      {
        page: "docs/how-it-decides.md",
        link: "configuration.md#no-such-heading",
        why: "no heading in docs/configuration.md makes #no-such-heading",
      },
    ]);
    expect(brokenLinks(page, `${text}\n[gone](no-such-page.md)\n`)).toEqual([
      { page: "docs/how-it-decides.md", link: "no-such-page.md", why: "no file docs/no-such-page.md" },
    ]);
  });

  for (const page of pages()) {
    it(`every relative link of ${relative(ROOT, page)} resolves`, () => {
      expect(brokenLinks(page)).toEqual([]);
    });
  }
});
