// Who is there, on SQLite: the replicas' heartbeats read by the reader's clock (one host, one clock).
import { and, eq, gte, sql } from "drizzle-orm";
import { replicas } from "../../schema.js";
import { p, type SomePrepared } from "./prepare.js";

export const REPLICAS = {
  tuiWatching: ({ db }) => {
    const select = db
      .select({ id: replicas.id })
      .from(replicas)
      .where(
        and(
          eq(replicas.kind, "tui"),
          eq(replicas.directory, p("directory")),
          gte(sql`${replicas.heartbeatAt} + ${replicas.leaseMs}`, p("now")),
        ),
      )
      .prepare();
    return (directory, now) => select.get({ directory, now }) !== undefined;
  },
} satisfies SomePrepared;
