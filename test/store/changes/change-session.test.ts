// change-session.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { CHANGE_SESSION_CASES } from "./change-session.cases.js";

contractOnBetterSqlite("change-session", CHANGE_SESSION_CASES);
