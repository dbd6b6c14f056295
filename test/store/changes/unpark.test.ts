// unpark.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { UNPARK_CASES } from "./unpark.cases.js";

contractOnBetterSqlite("unpark", UNPARK_CASES);
