import { describe, expect, it } from "vitest";
import { cancellationFor } from "../../src/core/activity.js";

describe("cancellation", () => {
  it("a user message within the grace period does not cancel, after it does", () => {
    expect(cancellationFor("user_message", 1000, 1499, 500)).toBeUndefined();
    expect(cancellationFor("user_message", 1000, 1500, 500)).toBe("user_message");
  });
  it("other activity cancels at once", () => {
    for (const a of ["assistant_activity", "tool_activity", "session_error", "session_deleted", "busy"] as const) {
      expect(cancellationFor(a, 1000, 1000, 500)).toBe(a);
    }
  });
});
