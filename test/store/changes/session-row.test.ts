// session-row.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { SESSION_ROW_CASES } from "./session-row.cases.js";

contractOnBetterSqlite("session-row", SESSION_ROW_CASES);
