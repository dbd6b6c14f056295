// What OpenCode 1.18.33's message parts say about the files a turn touched, with snapshots on or off: the completed
// `write`, `edit` and `apply_patch` tool parts (their arguments and metadata), and the `patch` parts a step leaves
// when snapshots are on (every file the step changed, `bash` included). Read from the messages a look already reads.
import { isAbsolute, join } from "node:path";
import { num, obj, str, type Json } from "../core/fields.js";
import type { FileEvidence } from "../core/work.js";
import { textHash } from "./content-hash.js";

/** Whether a tool's added and removed line counts say the file changed; undefined when it does not say. */
function changedByCounts(source: Json | undefined): boolean | undefined {
  const added = num(source?.additions);
  const removed = num(source?.deletions);
  return added === undefined && removed === undefined ? undefined : (added ?? 0) + (removed ?? 0) > 0;
}

function toolFiles(tool: string, state: Json, directory: string | undefined): FileEvidence[] {
  const input = obj(state.input);
  const metadata = obj(state.metadata);
  const rooted = (path: string | undefined) =>
    path === undefined ? undefined : isAbsolute(path) || !directory ? path : join(directory, path);
  if (tool === "write") {
    const path = rooted(str(metadata?.filepath) ?? str(input?.filePath));
    if (!path) return [];
    const content = input?.content;
    return [
      {
        path,
        ...(typeof content === "string" ? { after: textHash(content) } : {}),
        ...(metadata?.exists === false ? { before: null } : {}),
      },
    ];
  }
  if (tool === "edit") {
    const path = rooted(str(obj(metadata?.filediff)?.file) ?? str(input?.filePath));
    const changed = changedByCounts(obj(metadata?.filediff));
    return path ? [{ path, ...(changed !== undefined ? { changed } : {}) }] : [];
  }
  if (tool === "apply_patch" && Array.isArray(metadata?.files)) return patchedFiles(metadata.files, rooted);
  return [];
}

function patchedFiles(files: unknown[], rooted: (path: string | undefined) => string | undefined): FileEvidence[] {
  return files.flatMap((raw): FileEvidence[] => {
    const file = obj(raw);
    const path = rooted(str(file?.filePath));
    if (!file || !path) return [];
    const type = str(file.type);
    if (type === "add") return [{ path, before: null }];
    if (type === "delete") return [{ path, after: null }];
    const moved = rooted(str(file.movePath));
    if (type === "move" && moved) return [{ path, after: null }, { path: moved }];
    const changed = changedByCounts(file);
    return [{ path, ...(changed !== undefined ? { changed } : {}) }];
  });
}

/** The files one part says it touched (a completed writing tool, or a `patch` part); undefined when none. */
export function partFiles(part: Json, directory: string | undefined): FileEvidence[] | undefined {
  let files: FileEvidence[] = [];
  if (part.type === "patch" && Array.isArray(part.files))
    files = part.files.flatMap((f) => (typeof f === "string" && isAbsolute(f) ? [{ path: f }] : []));
  const state = obj(part.state);
  if (part.type === "tool" && state && str(state.status) === "completed")
    files = toolFiles(str(part.tool) ?? "", state, directory);
  return files.length > 0 ? files : undefined;
}
