// verify.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same cases on
// PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { VERIFY_CASES } from "./verify.cases.js";

contractOnBetterSqlite("verify", VERIFY_CASES);
