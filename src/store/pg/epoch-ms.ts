// Epoch milliseconds on PostgreSQL need 64 bits: every time is `bigint` in number mode (a JavaScript number is exact to
// 2^53, and the driver then returns numbers, not strings).
import { bigint } from "drizzle-orm/pg-core";

export const ms = (name: string) => bigint(name, { mode: "number" });
