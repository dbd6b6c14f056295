// arm.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { ARM_CASES } from "./arm.cases.js";

contractOnBetterSqlite("arm", ARM_CASES);
