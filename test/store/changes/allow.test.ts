// allow.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { ALLOW_CASES } from "./allow.cases.js";

contractOnBetterSqlite("allow", ALLOW_CASES);
