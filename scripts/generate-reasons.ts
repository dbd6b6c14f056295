// Writes the reasons' tables of docs/how-it-decides.md (between their markers) from the code's tables of the skip
// and cancel reasons. `npm run docs:reasons`; test/docs/reasons.test.ts fails when the page is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { replaceBetweenMarkers } from "./markers.js";
import { cancelTable, guardTable } from "./reason-tables.js";

const page = join(import.meta.dirname, "..", "docs", "how-it-decides.md");
const guards = replaceBetweenMarkers(readFileSync(page, "utf8"), "guards", guardTable());
writeFileSync(page, replaceBetweenMarkers(guards, "cancel-reasons", cancelTable()));
console.log("wrote the guard table and the cancel reasons of docs/how-it-decides.md");
