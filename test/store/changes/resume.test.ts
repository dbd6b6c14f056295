// resume.cases.ts on better-sqlite3; contract.postgres.test.ts and contract.bun.test.ts run the same
// cases on PostgreSQL and under OpenCode's Bun.
import { contractOnBetterSqlite } from "../contract-on-sqlite.js";
import { RESUME_CASES } from "./resume.cases.js";

contractOnBetterSqlite("resume", RESUME_CASES);
