import { describe, expect, it } from "vitest";
import { SECRET_MARK, withoutSecrets } from "../../src/core/without-secrets.js";

describe("withoutSecrets", () => {
  it("replaces the values of secret-looking variables, the longest first", () => {
    const env = {
      GITHUB_TOKEN: "abcdefgh12345678",
      DB_PASSWORD: "hunter2hunter2",
      TOKEN_PREFIX: "abcdefgh",
      HOME: "/home/me",
    };
    const text = "token=abcdefgh12345678 pass=hunter2hunter2 home=/home/me";
    expect(withoutSecrets(text, env)).toBe(`token=${SECRET_MARK} pass=${SECRET_MARK} home=/home/me`);
  });

  it("leaves short values and other variables alone", () => {
    expect(withoutSecrets("debug=true ci=1", { API_KEY: "true", CI: "1" })).toBe("debug=true ci=1");
  });

  it("replaces tokens by their shape, keeping an authorization header's scheme", () => {
    const text = [
      "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload",
      "ghp_0123456789abcdefghijABCDEFGHIJ",
      "key sk-ant-api03-abcdefghijklmnop",
      "aws AKIAABCDEFGHIJKLMNOP",
    ].join("\n");
    expect(withoutSecrets(text, {}).split("\n")).toEqual([
      `Authorization: Bearer ${SECRET_MARK}`,
      SECRET_MARK,
      `key ${SECRET_MARK}`,
      `aws ${SECRET_MARK}`,
    ]);
  });
});
