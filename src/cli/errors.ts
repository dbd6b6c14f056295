/** A failure the CLI explains in one line and exits 1 for (usage errors exit 2 through commander). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

/** A usage error found after parsing (a malformed duration, a bad number): exit 2 like commander's own. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
