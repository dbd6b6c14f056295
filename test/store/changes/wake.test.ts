// wake.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { WAKE_CASES } from "./wake.cases.js";

contractOnBetterSqlite("wake", WAKE_CASES);
