/** Raised for every failure to open a database: the message says which one (a file, or a URL without its password) and why. */
export class StoreOpenError extends Error {
  constructor(
    readonly location: string,
    message: string,
    cause?: unknown,
  ) {
    super(`cannot open the todo-continuation database ${location}: ${message}`, { cause });
    this.name = "StoreOpenError";
  }
}
