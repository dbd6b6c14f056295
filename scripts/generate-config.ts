// Writes what is made from the option table (src/config/options.ts): the JSON Schema the package ships, and the
// option table of docs/configuration.md (between its markers). `npm run docs:config`; a test fails when either is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configJsonSchema, optionsTable, SCHEMA_FILE } from "../src/config/json-schema.js";
import { replaceBetweenMarkers } from "./markers.js";

const root = join(import.meta.dirname, "..");
writeFileSync(join(root, SCHEMA_FILE), `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
const page = join(root, "docs", "configuration.md");
writeFileSync(page, replaceBetweenMarkers(readFileSync(page, "utf8"), "options", optionsTable()));
console.log(`wrote ${SCHEMA_FILE} and the option table of docs/configuration.md`);
