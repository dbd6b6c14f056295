// tell-stop.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { TELL_STOP_CASES } from "./tell-stop.cases.js";

contractOnBetterSqlite("tell-stop", TELL_STOP_CASES);
