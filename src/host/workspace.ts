// The project's files as they are on disk now, hashed for the look that judges whether a turn changed them. Runs in
// Node and in Bun (OpenCode's plugins). A file this process cannot read stays unknown: absent from the answer.
import { readFile, stat } from "node:fs/promises";
import { contentHash } from "./content-hash.js";

/** OpenCode's own snapshots leave out files over 2 MiB; so does this (they stay unknown). */
export const LARGEST_HASHED_FILE = 2 * 1024 * 1024;
const AT_ONCE = 8;

/** path → content hash, or `null` when no such file exists; unreadable files, directories and large files are absent. */
export async function hashFiles(paths: readonly string[], signal: AbortSignal): Promise<Record<string, string | null>> {
  const hashes: Record<string, string | null> = {};
  for (let i = 0; i < paths.length; i += AT_ONCE) {
    signal.throwIfAborted();
    await Promise.all(
      paths.slice(i, i + AT_ONCE).map(async (path) => {
        const hash = await hashFile(path, signal);
        if (hash !== undefined) hashes[path] = hash;
      }),
    );
  }
  return hashes;
}

async function hashFile(path: string, signal: AbortSignal): Promise<string | null | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile() || info.size > LARGEST_HASHED_FILE) return undefined;
    return contentHash(await readFile(path, { signal }));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? null : undefined;
  }
}
