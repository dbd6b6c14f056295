/** Inside OpenCode (Bun) the drivers are Bun's own (bun:sqlite, Bun's SQL); under Node they are better-sqlite3 and pg. */
export const isBun = typeof (process.versions as Record<string, string | undefined>).bun === "string";
