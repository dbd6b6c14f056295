// Prints the walk of one idle (test/support/idle-walk.ts): each hop between the engine's parts in order, then what it
// cost, and every source file whose code ran during it (V8's precise coverage of this process).
import { Session } from "node:inspector/promises";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { walkOneIdle } from "../test/support/idle-walk.js";

const SRC = resolve(import.meta.dirname, "..", "src");
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
await walkOneIdle(); // warm: modules loaded, first calls made
let result: Awaited<ReturnType<typeof takeCoverage>>["result"] = [];
const takeCoverage = () => session.post("Profiler.takePreciseCoverage");
const walk = await walkOneIdle({
  before: takeCoverage,
  after: async () => ({ result } = await takeCoverage()),
});
const ran = result
  .filter((script) => script.url.startsWith("file://") && fileURLToPath(script.url).startsWith(SRC))
  .filter((script) => script.functions.some((f) => f.ranges.some((r) => r.count > 0)))
  .map((script) => relative(SRC, fileURLToPath(script.url)))
  .sort();

let previous = "";
for (const [i, hop] of walk.hops.entries()) {
  const folder = hop.file.slice(0, hop.file.lastIndexOf("/"));
  const from = hop.from ? `  ← ${hop.from}` : "";
  console.log(
    `${String(i + 1).padStart(3)} ${folder === previous ? " " : "*"} ${hop.call.padEnd(44)} ${hop.file}${from}`,
  );
  previous = folder;
}
console.log(
  JSON.stringify(
    {
      hops: walk.hops.length,
      folderChanges: walk.folderChanges,
      crossings: walk.crossings,
      partFiles: walk.files.length,
      guardRuns: walk.guardRuns,
      hostGatherings: walk.hostGatherings,
      hostReads: walk.hostReads,
      laneEntries: walk.laneEntries,
      storeReads: walk.storeReads,
      storeChanges: walk.storeChanges,
      sourceFilesRun: ran.length,
    },
    null,
    2,
  ),
);
console.log(ran.join("\n"));
