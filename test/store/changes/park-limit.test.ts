// park-limit.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { PARK_LIMIT_CASES } from "./park-limit.cases.js";

contractOnBetterSqlite("park-limit", PARK_LIMIT_CASES);
