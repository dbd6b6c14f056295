// docs/architecture.md "One idle, from event to prompt call" against the code: one idle walked through a real engine
// (test/support/idle-walk.ts) enters every hop the list names, in the list's order, and every file it enters is named
// in the list. A part renamed, moved, or newly on the path fails here until the list says so.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { walkOneIdle, type IdleWalk } from "../support/idle-walk.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SECTION = "## One idle, from event to prompt call";

/** The numbered list of the section. */
function hopList(): string {
  const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf(SECTION));
  const start = section.search(/^1\. /m);
  const end = section.indexOf("\n\n", start);
  return section.slice(start, end);
}

/**
 * Every hop the list names, in order: `file.ts` `function`, a `→ `function`` after it entering another function of
 * the same file, and a change script named by its file alone (store/changes/x.ts). OpenCode is the walk's fake host,
 * so the host's file is the port's.
 */
function namedHops(list: string): Array<{ file: string; call: string }> {
  const hops: Array<{ file: string; call: string }> = [];
  let file = "";
  for (const match of list.matchAll(/`([\w./-]+\.ts)`(?:\s+`(\w+)`)?|→ `(\w+)`/g)) {
    if (match[1]) {
      file = match[1].replace(/^host\/opencode-host\.ts$/, "host/port.ts");
      const change = /^store\/changes\/([\w-]+)\.ts$/.exec(file);
      if (change) hops.push({ file, call: `store.change ${change[1]}` });
      else if (match[2]) hops.push({ file, call: match[2] });
    } else if (match[3]) hops.push({ file, call: match[3] });
  }
  return hops;
}

/** The files a list names (any backticked path), the host's as the port's. */
function namedFiles(list: string): Set<string> {
  return new Set(
    [...list.matchAll(/`([\w./-]+\.ts)`/g)].map((m) => m[1]!.replace(/^host\/opencode-host\.ts$/, "host/port.ts")),
  );
}

let walk: IdleWalk;
let list: string;

beforeAll(async () => {
  walk = await walkOneIdle();
  list = hopList();
});

describe("the hop list of one idle", () => {
  it("names the hops of the walk in the order the idle enters them", () => {
    const hops = namedHops(list);
    // The plugin's hook and the enforcer's are outside the engine's parts: the walk starts at the router.
    const inEngine = hops.filter((h) => !h.file.startsWith("plugin/") && h.file !== "engine/enforcer.ts");
    expect(inEngine.length).toBeGreaterThan(20);
    let at = 0;
    const missing: string[] = [];
    for (const hop of inEngine) {
      const found = walk.hops.findIndex(
        (entered, i) =>
          i >= at &&
          entered.file === hop.file &&
          (entered.call === hop.call || entered.call.endsWith(`.${hop.call}`) || entered.call === `host.${hop.call}`),
      );
      if (found === -1) missing.push(`${hop.file} ${hop.call} (after hop ${at + 1} of the walk)`);
      else at = found;
    }
    expect(missing).toEqual([]);
  });

  it("names every file the idle enters", () => {
    const named = namedFiles(list);
    // Reads by name and the host are where every part goes; they are named by what they read, not by file.
    const entered = walk.files.filter((file) => file !== "store/reads.ts" && !named.has(file));
    expect(entered).toEqual([]);
  });

  it("is the walk of an idle that ends in one prompt call, the chain run three times, OpenCode read twice", () => {
    expect(walk.hops.filter((h) => h.call === "host.prompt")).toHaveLength(1);
    expect(walk.guardRuns).toBe(3);
    expect(walk.hostGatherings).toBe(2);
    expect(walk.storeChanges).toEqual(["look-owed", "arm", "claim", "record-outcome"]);
  });
});
