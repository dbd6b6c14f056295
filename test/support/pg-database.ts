// A fresh database on the run's shared PostgreSQL server (see pg-global-setup.ts).
import pg from "pg";
import { inject } from "vitest";

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
  const client = new pg.Client({ connectionString: sharedServerUrl() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return sharedServerUrl(name);
}

/** Runs one statement on `url` and returns its rows. */
export async function pgQuery<T = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}
