// settle-notice.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { SETTLE_NOTICE_CASES } from "./settle-notice.cases.js";

contractOnBetterSqlite("settle-notice", SETTLE_NOTICE_CASES);
