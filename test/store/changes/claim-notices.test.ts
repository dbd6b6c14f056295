// claim-notices.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { CLAIM_NOTICES_CASES } from "./claim-notices.cases.js";

contractOnBetterSqlite("claim-notices", CLAIM_NOTICES_CASES);
