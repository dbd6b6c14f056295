// Every command prints either a human table or, with --json, one JSON document on stdout.
import { InvalidArgumentError, type Command } from "commander";
import { parseDuration } from "./format.js";

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

/** A help text's closing lines: commands to copy, one per line. */
export function examples(...commands: string[]): string {
  return `\nExample${commands.length > 1 ? "s" : ""}:\n${commands.map((c) => `  $ ${c}`).join("\n")}`;
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A document for scripts with every key in snake_case, as the database's columns (and the rows other commands print)
 * are named. Until version 0.3 each renamed key is also printed under the camelCase name version 0.1 gave it (the
 * CHANGELOG says so), so that scripts have a release to move.
 */
export function snakeCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCased);
  if (value === null || typeof value !== "object" || value.constructor !== Object) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const converted = snakeCased(inner);
    out[snake(key)] = converted;
    if (snake(key) !== key) out[key] = converted;
  }
  return out;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The largest count a command takes: far above any real need, and within every driver's integer. */
const MAX_COUNT = 1_000_000_000;

/** A commander argument parser for options that take a positive integer. */
export function positiveIntegerArg(name: string, value: string): number {
  if (!/^\s*\d+\s*$/.test(value))
    throw new InvalidArgumentError(`${name} takes a whole number from 1 to ${MAX_COUNT}.`);
  const n = Number(value);
  if (n < 1 || n > MAX_COUNT) throw new InvalidArgumentError(`${name} is out of range: it takes 1 to ${MAX_COUNT}.`);
  return n;
}

/** The largest amount of money a command takes: the largest cost cap there can be (src/config/options.ts). */
const MAX_AMOUNT = 1_000_000;

/** A commander argument parser for options that take an amount above 0 ("0.50", "2"). */
export function positiveAmountArg(name: string, value: string): number {
  if (!/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value))
    throw new InvalidArgumentError(`${name} takes an amount such as 0.50 (in the currency of the models' prices).`);
  const amount = Number(value);
  if (amount <= 0 || amount > MAX_AMOUNT)
    throw new InvalidArgumentError(`${name} is out of range: it takes more than 0, up to ${MAX_AMOUNT}.`);
  return amount;
}

/** A century: longer than any history, and a time the database's integer columns still hold. */
const MAX_DURATION_MS = 100 * 365 * 86_400_000;

/** A commander argument parser for options that take a duration ("30m", "12h", "7d"); milliseconds. */
export function durationArg(name: string, value: string, examples: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new InvalidArgumentError(`a duration such as ${examples}.`);
  if (ms > MAX_DURATION_MS) throw new InvalidArgumentError(`${name} is out of range: 100 years at most.`);
  return ms;
}
