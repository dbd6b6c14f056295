// renew-leases.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { RENEW_LEASES_CASES } from "./renew-leases.cases.js";

contractOnBetterSqlite("renew-leases", RENEW_LEASES_CASES);
