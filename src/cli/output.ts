// Every command prints either a human table or, with --json, one JSON document on stdout.
import { InvalidArgumentError, type Command } from "commander";

export interface GlobalOptions {
  db?: string;
  json?: boolean;
}

export function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

export function print(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A commander argument parser for options that take a positive integer. */
export function positiveIntegerArg(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} takes a positive integer.`);
  return n;
}
