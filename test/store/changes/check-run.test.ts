// check-run.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { CHECK_RUN_CASES } from "./check-run.cases.js";

contractOnBetterSqlite("check-run", CHECK_RUN_CASES);
