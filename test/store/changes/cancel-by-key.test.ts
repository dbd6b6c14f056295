// cancel-by-key.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { CANCEL_BY_KEY_CASES } from "./cancel-by-key.cases.js";

contractOnBetterSqlite("cancel-by-key", CANCEL_BY_KEY_CASES);
