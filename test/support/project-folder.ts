// A project folder of its own, with a `.opencode/todo-continuation.json` when a test gives its content.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempFolder } from "./temp-folders.js";

export function projectFolder(file?: object): string {
  const directory = tempFolder("project-");
  if (file) {
    mkdirSync(join(directory, ".opencode"));
    writeFileSync(join(directory, ".opencode", "todo-continuation.json"), JSON.stringify(file));
  }
  return directory;
}
