// record-outcome.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { RECORD_OUTCOME_CASES } from "./record-outcome.cases.js";

contractOnBetterSqlite("record-outcome", RECORD_OUTCOME_CASES);
