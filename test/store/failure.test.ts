// One describer of database failures for the plugin's log, the service's and the CLI's errors: the driver's own words
// and what they mean, short — never the statement drizzle puts in front of them, its parameters, or a password.
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { describeDatabaseFailure } from "../../src/store/open/failure.js";

const LOCATION = "postgres://u:***@127.0.0.1:1/db";
const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
  code: "ECONNREFUSED",
  address: "127.0.0.1",
  port: 1,
});
const statement = `INSERT INTO audit_events (at, session_id, event, reason, detail) VALUES ($1, $2, $3, $4, $5) ${"-- padding ".repeat(60)}`;
const params = [1764130000000, "ses_secret_session", "armed", null, JSON.stringify({ note: "x".repeat(400) })];

describe("describeDatabaseFailure", () => {
  it("says why a statement failed in one short line, without the statement or its parameters", () => {
    const text = describeDatabaseFailure(new DrizzleQueryError(statement, params, refused), LOCATION);
    expect(text).toBe("nothing answers at 127.0.0.1:1 (connect ECONNREFUSED 127.0.0.1:1)");
  });

  it.each([
    [Object.assign(new Error('database "nope" does not exist'), { code: "3D000" }), /^the database does not exist/],
    [
      Object.assign(new Error('password authentication failed for user "u"'), { code: "28P01" }),
      /^the server refused the credentials/,
    ],
    [
      Object.assign(new Error("cannot execute INSERT in a read-only transaction"), { code: "25006" }),
      /^the server is read-only/,
    ],
    [new Error("timeout exceeded when trying to connect"), /^the server did not answer in time/],
    [
      Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY" }),
      /^the file or its folder is read-only \(attempt to write a readonly database\)$/,
    ],
    [
      Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" }),
      /^the file is not a valid SQLite database/,
    ],
  ])("%s", (error, expected) => {
    const text = describeDatabaseFailure(new DrizzleQueryError(statement, params, error), LOCATION);
    expect(text).toMatch(expected);
    expect(text).not.toMatch(/INSERT INTO|params|ses_secret_session/);
  });

  it("never shows a password, even one a driver put in its message", () => {
    const error = new Error("could not connect to postgres://u:s3cret@db.internal:5432/x");
    expect(describeDatabaseFailure(error)).toBe("could not connect to postgres://u:***@db.internal:5432/x");
  });

  it("stays short whatever the driver says", () => {
    expect(describeDatabaseFailure(new Error("x".repeat(5000))).length).toBeLessThanOrEqual(240);
  });
});
