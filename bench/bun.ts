// The hot-path and state-change figures under the Bun that hosts OpenCode's plugins (bun:sqlite).
import { hotPath } from "./hot-path.js";
import { stateChanges } from "./state-changes.js";

const figures = [...(await hotPath()), ...(await stateChanges())];
process.stdout.write(`${JSON.stringify({ figures })}\n`);
