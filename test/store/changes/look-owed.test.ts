// look-owed.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { LOOK_OWED_CASES } from "./look-owed.cases.js";

contractOnBetterSqlite("look-owed", LOOK_OWED_CASES);
