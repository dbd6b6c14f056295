// The adapter to OpenCode's SDK, against a fake client that validates what it is sent as OpenCode 1.18.33 does.
import { describe, expect, it } from "vitest";
import { OpenCodeHost } from "../../src/host/opencode-host.js";
import { FakeHost } from "../support/fake-host.js";
import { fakeSdkClient } from "../support/fake-sdk-client.js";

describe("the OpenCode host adapter", () => {
  it("sends a toast's duration as whole milliseconds: the last second of a countdown is a fraction of one", async () => {
    const host = new FakeHost();
    const adapter = new OpenCodeHost(fakeSdkClient(host) as never, "/p");
    await adapter.toast({
      title: "Todo continuation",
      message: "Resuming in 1s…",
      variant: "warning",
      durationMs: 998.39,
    });
    await adapter.toast({
      title: "Todo continuation",
      message: "Resuming in 1s…",
      variant: "warning",
      durationMs: 0.2,
    });
    expect(host.toasts.map((t) => (t as unknown as { duration: number }).duration)).toEqual([998, 1]);
  });
});
