// Where a replica's CPU went, from the profile `npm run bench:fleet -- --profile --keep` has its first replica write
// (node --cpu-prof): self time by part (this package's folders, each dependency, Node itself) and by function.
//   npx tsx bench/fleet/profile.ts <folder or file.cpuprofile>
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

/** The part of the program a script belongs to: a folder of dist/, a dependency, or Node's own. */
function partOf(url: string): string {
  if (!url) return "(native, idle, GC)";
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  const own = /\/dist\/(.*)\/[^/]+\.js$/.exec(url);
  if (own) return `dist/${own[1]}`;
  if (url.startsWith("node:")) return "node:internal";
  return url;
}

function summarize(profile: Profile, top = 25): string {
  const totalUs = profile.endTime - profile.startTime;
  const perSampleUs = totalUs / Math.max(1, profile.samples.length);
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const byPart = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const n = hits.get(node.id) ?? 0;
    if (n === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const part = partOf(url);
    byPart.set(part, (byPart.get(part) ?? 0) + n);
    const name = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + n);
  }
  const samples = profile.samples.length;
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, n]) => `${((100 * n) / samples).toFixed(1).padStart(5)}%  ${((n * perSampleUs) / 1e6).toFixed(1)} s  ${k}`,
      );
  return [
    `${samples} samples over ${(totalUs / 1e6).toFixed(1)} s`,
    "",
    "self time by part:",
    ...rows(byPart),
    "",
    "self time by function:",
    ...rows(byFunction),
  ].join("\n");
}

const target = process.argv[2];
if (!target) throw new Error("usage: tsx bench/fleet/profile.ts <folder or file.cpuprofile>");
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => join(target, f))
  : [target];
for (const file of files) console.log(`${file}\n${summarize(JSON.parse(readFileSync(file, "utf8")) as Profile)}\n`);
