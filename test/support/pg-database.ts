// A fresh database on the run's shared PostgreSQL server (see pg-global-setup.ts).
import { inject } from "vitest";
import { query } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Port of the shared test server (user `postgres`, trust on loopback). */
    pgPort: number;
    pgDir: string;
  }
}

export function sharedServerUrl(database = "postgres"): string {
  return `postgres://postgres@127.0.0.1:${inject("pgPort")}/${database}`;
}

/** Creates an empty database and returns its URL. */
export async function freshDatabase(prefix = "tc"): Promise<string> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await query(sharedServerUrl(), `CREATE DATABASE ${name}`);
  return sharedServerUrl(name);
}

/** Runs one statement on `url` and returns its rows. */
export async function pgQuery<T = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  return (await query(url, text, params)).rows as T[];
}
