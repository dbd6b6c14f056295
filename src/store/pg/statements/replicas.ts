// Who is there, on PostgreSQL: the replicas' heartbeats, judged by the database's clock.
import { whole } from "../rows.js";
import { FRESH, type SomePg } from "./statement.js";

export const REPLICAS = {
  tuiWatching: {
    sql: `SELECT id FROM replicas WHERE kind = 'tui' AND directory = $1 AND ${FRESH} LIMIT 1`,
    async run(c, directory) {
      return whole(await c.rows<{ id: string }>([directory]), ["id"]).length > 0;
    },
  },
} satisfies SomePg;
