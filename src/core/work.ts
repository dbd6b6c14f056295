// Work as progress: whether a continuation's turn left the project's files different from every state they had
// lately. A file counts when its content after the turn is neither what it was before the turn nor one of its recent
// contents, so writing back the same content, undoing the previous turn or cycling through old versions is not work.
// Pure: contents arrive as opaque hashes (the host adapter hashes them); `null` is "no such file".

/** What one turn says about one file. */
export interface FileEvidence {
  /** Absolute path. */
  path: string;
  /** Content hash after the turn; `null`: the file is gone; absent: unknown. */
  after?: string | null;
  /** Content hash before the turn when the turn itself says (`null`: the turn created it). */
  before?: string | null;
  /** What the tool reported when no content is known (an edit with added or removed lines). */
  changed?: boolean;
}

/** The files the latest turn touched, from its tool and patch parts. */
export interface TurnFiles {
  /** `own`: the turn answers one of the enforcer's continuations; `other`: a person's message (a baseline only). */
  answers: "own" | "other";
  files: FileEvidence[];
}

/** Each file's latest contents (oldest first), for the files the session touched most recently. */
export interface FileLedger {
  files: Readonly<Record<string, ReadonlyArray<string | null>>>;
}

/** Recent contents kept per file: enough to see an undo and a short cycle. */
export const HASHES_PER_FILE = 4;
/** Files kept in the ledger (the least recently touched go first): it is stored with the session row. */
export const LEDGER_FILES = 64;

export interface FilesJudgement {
  /** Files whose content is new. */
  changed: number;
  /** Files touched whose content went back to a recent one (an undo, a cycle) or stayed the same. */
  churned: number;
}

function judgeFile(history: ReadonlyArray<string | null>, file: FileEvidence): "changed" | "churned" {
  if (file.after === undefined) return file.changed === false ? "churned" : "changed";
  const before = file.before !== undefined ? file.before : history.at(-1);
  if (before !== undefined && file.after === before) return "churned";
  return history.includes(file.after) ? "churned" : "changed";
}

/** How many of the turn's files changed for real, judged against the ledger. */
export function judgeFiles(ledger: FileLedger | null, turn: TurnFiles): FilesJudgement {
  const judgement: FilesJudgement = { changed: 0, churned: 0 };
  for (const file of turn.files) judgement[judgeFile(ledger?.files[file.path] ?? [], file)]++;
  return judgement;
}

/** The ledger once the turn's files are known: their contents appended, the path moved to the most recent end. */
export function mergeFileLedger(ledger: FileLedger | null, turn: TurnFiles | undefined): FileLedger | null {
  if (!turn || turn.files.length === 0) return ledger;
  const files = new Map(Object.entries(ledger?.files ?? {}));
  for (const file of turn.files) {
    const history = [...(files.get(file.path) ?? [])];
    for (const hash of [file.before, file.after])
      if (hash !== undefined && history.at(-1) !== hash) {
        const at = history.indexOf(hash);
        if (at >= 0) history.splice(at, 1);
        history.push(hash);
      }
    files.delete(file.path);
    files.set(file.path, history.slice(-HASHES_PER_FILE));
  }
  const kept = [...files].slice(-LEDGER_FILES);
  return { files: Object.fromEntries(kept) };
}

/** The turn's evidence with what the disk says now (`hashes`: path → hash, `null` for gone; unreadable: absent). */
export function withDiskHashes(turn: TurnFiles, hashes: Readonly<Record<string, string | null>>): TurnFiles {
  return {
    ...turn,
    files: turn.files.map((file) => {
      if (!(file.path in hashes)) return file;
      const disk = hashes[file.path]!;
      // A file the turn wrote and the disk does not have is more likely a disk this process cannot see (a service on
      // another machine) than one written and deleted again in one turn.
      if (disk === null && typeof file.after === "string") return file;
      return { ...file, after: disk };
    }),
  };
}

export function parseFileLedger(text: string | null | undefined): FileLedger | null {
  if (!text) return null;
  try {
    const parsed = JSON.parse(text) as { files?: unknown };
    const files = parsed?.files;
    if (!files || typeof files !== "object" || Array.isArray(files)) return null;
    const valid = Object.entries(files).filter(
      (entry): entry is [string, Array<string | null>] =>
        Array.isArray(entry[1]) && entry[1].every((h) => h === null || typeof h === "string"),
    );
    return { files: Object.fromEntries(valid) };
  } catch {
    return null;
  }
}

export function serializeFileLedger(ledger: FileLedger | null): string | null {
  return ledger ? JSON.stringify({ files: ledger.files }) : null;
}
