// park.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { PARK_CASES } from "./park.cases.js";

contractOnBetterSqlite("park", PARK_CASES);
