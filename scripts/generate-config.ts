// Writes what is made from the option table (src/config/options.ts): the JSON Schema the package ships, and the
// option and channel tables of docs/configuration.md (between their markers). `npm run docs:config`; a test fails
// when one is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { channelsTable, configJsonSchema, optionsTable, SCHEMA_FILE } from "../src/config/json-schema.js";
import { replaceBetweenMarkers } from "./markers.js";

const root = join(import.meta.dirname, "..");
writeFileSync(join(root, SCHEMA_FILE), `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
const page = join(root, "docs", "configuration.md");
const options = replaceBetweenMarkers(readFileSync(page, "utf8"), "options", optionsTable());
writeFileSync(page, replaceBetweenMarkers(options, "channels", channelsTable()));
console.log(`wrote ${SCHEMA_FILE} and the option and channel tables of docs/configuration.md`);
