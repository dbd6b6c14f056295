// record-bill.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { RECORD_BILL_CASES } from "./record-bill.cases.js";

contractOnBetterSqlite("record-bill", RECORD_BILL_CASES);
