// What the store promises, gathered for the runners of every driver: under Node on PostgreSQL (node-postgres,
// contract.postgres.test.ts), and under OpenCode's Bun on bun:sqlite and on PostgreSQL through Bun's SQL client
// (bun-contract-runner.ts). On better-sqlite3 each subject's own test file runs its cases (changes/arm.test.ts…), and
// contract-files.test.ts checks that every subject is here and has that file. A subject is named after what its cases
// test: a change script of src/store/changes (one per file), or the statements, reads, liveness and operator face.
import type { ContractCase } from "./contract-world.js";
import { ADOPT_CASES } from "./changes/adopt.cases.js";
import { ALLOW_CASES } from "./changes/allow.cases.js";
import { ARM_CASES } from "./changes/arm.cases.js";
import { CANCEL_BY_KEY_CASES } from "./changes/cancel-by-key.cases.js";
import { CHANGE_SESSION_CASES } from "./changes/change-session.cases.js";
import { CLAIM_CASES } from "./changes/claim.cases.js";
import { CLAIM_NOTICES_CASES } from "./changes/claim-notices.cases.js";
import { END_CASES } from "./changes/end.cases.js";
import { LOOK_OWED_CASES } from "./changes/look-owed.cases.js";
import { CHECK_RUN_CASES } from "./changes/check-run.cases.js";
import { VERIFY_CASES } from "./changes/verify.cases.js";
import { PARK_CASES } from "./changes/park.cases.js";
import { PARK_LIMIT_CASES } from "./changes/park-limit.cases.js";
import { PRUNE_CASES } from "./changes/prune.cases.js";
import { RELEASE_LEASES_CASES } from "./changes/release-leases.cases.js";
import { RENEW_LEASES_CASES } from "./changes/renew-leases.cases.js";
import { RECORD_BILL_CASES } from "./changes/record-bill.cases.js";
import { RECORD_OUTCOME_CASES } from "./changes/record-outcome.cases.js";
import { RESUME_CASES } from "./changes/resume.cases.js";
import { SESSION_ROW_CASES } from "./changes/session-row.cases.js";
import { SETTLE_NOTICE_CASES } from "./changes/settle-notice.cases.js";
import { SKIP_CASES } from "./changes/skip.cases.js";
import { STOP_CASES } from "./changes/stop.cases.js";
import { TELL_STOP_CASES } from "./changes/tell-stop.cases.js";
import { UNPARK_CASES } from "./changes/unpark.cases.js";
import { WAKE_CASES } from "./changes/wake.cases.js";
import { LIVENESS_CASES } from "./liveness.cases.js";
import { OPERATOR_CASES } from "./operator.cases.js";
import { READS_CASES } from "./reads.cases.js";
import { STATEMENTS_CASES } from "./statements.cases.js";

export interface ContractSubject {
  /** Its cases file's path under test/store, without `.cases.ts`: `changes/arm`, `reads`. */
  subject: string;
  cases: ContractCase[];
}

export const CONTRACT: ContractSubject[] = [
  { subject: "changes/arm", cases: ARM_CASES },
  { subject: "changes/end", cases: END_CASES },
  { subject: "changes/cancel-by-key", cases: CANCEL_BY_KEY_CASES },
  { subject: "changes/stop", cases: STOP_CASES },
  { subject: "changes/resume", cases: RESUME_CASES },
  { subject: "changes/allow", cases: ALLOW_CASES },
  { subject: "changes/session-row", cases: SESSION_ROW_CASES },
  { subject: "changes/record-bill", cases: RECORD_BILL_CASES },
  { subject: "changes/claim", cases: CLAIM_CASES },
  { subject: "changes/record-outcome", cases: RECORD_OUTCOME_CASES },
  { subject: "changes/adopt", cases: ADOPT_CASES },
  { subject: "changes/renew-leases", cases: RENEW_LEASES_CASES },
  { subject: "changes/release-leases", cases: RELEASE_LEASES_CASES },
  { subject: "changes/change-session", cases: CHANGE_SESSION_CASES },
  { subject: "changes/skip", cases: SKIP_CASES },
  { subject: "changes/look-owed", cases: LOOK_OWED_CASES },
  { subject: "changes/prune", cases: PRUNE_CASES },
  { subject: "changes/tell-stop", cases: TELL_STOP_CASES },
  { subject: "changes/claim-notices", cases: CLAIM_NOTICES_CASES },
  { subject: "changes/settle-notice", cases: SETTLE_NOTICE_CASES },
  { subject: "changes/park", cases: PARK_CASES },
  { subject: "changes/park-limit", cases: PARK_LIMIT_CASES },
  { subject: "changes/wake", cases: WAKE_CASES },
  { subject: "changes/unpark", cases: UNPARK_CASES },
  { subject: "changes/check-run", cases: CHECK_RUN_CASES },
  { subject: "changes/verify", cases: VERIFY_CASES },
  { subject: "statements", cases: STATEMENTS_CASES },
  { subject: "reads", cases: READS_CASES },
  { subject: "liveness", cases: LIVENESS_CASES },
  { subject: "operator", cases: OPERATOR_CASES },
];

export const CONTRACT_CASES: ContractCase[] = CONTRACT.flatMap((s) => s.cases);
