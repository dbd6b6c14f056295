// release-leases.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { RELEASE_LEASES_CASES } from "./release-leases.cases.js";

contractOnBetterSqlite("release-leases", RELEASE_LEASES_CASES);
