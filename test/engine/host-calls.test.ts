// host-calls promises: withTimeout bounds every call to OpenCode — past `ms` the call's signal is aborted and the result
// rejects with a HostTimeoutError naming the call and the time, a call that settles first settles it as it did, and no
// timer is left behind either way. mayHaveBeenDelivered says a failed call may still have been carried out unless the
// answer was a refusal (HTTP 4xx other than 408 and 429) or no connection was ever made (refused, in the error or in
// its cause). withCause adds a fetch error's cause to its message; errorMessage puts anything thrown into words.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  errorMessage,
  HostTimeoutError,
  mayHaveBeenDelivered,
  withCause,
  withTimeout,
} from "../../src/engine/host-calls.js";
import { HostHttpError } from "../../src/host/port.js";

describe("withTimeout", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a call that never answers: at `ms` its signal is aborted and it rejects with a HostTimeoutError", async () => {
    let signal!: AbortSignal;
    const result = withTimeout("todo read", 2000, (s) => {
      signal = s;
      return new Promise<never>(() => {});
    });
    const settled = vi.fn();
    result.then(settled, settled);
    await vi.advanceTimersByTimeAsync(1999);
    expect(signal.aborted).toBe(false);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(signal.aborted).toBe(true);
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostTimeoutError);
    expect(error).toMatchObject({ name: "HostTimeoutError", message: "todo read did not answer within 2000 ms" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a call that listens to its signal is told to stop when the time is up", async () => {
    const aborted = vi.fn();
    const result = withTimeout("prompt", 500, (signal) => {
      signal.addEventListener("abort", aborted);
      return new Promise<never>(() => {});
    });
    const caught = result.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(500);
    expect(aborted).toHaveBeenCalledTimes(1);
    expect(await caught).toBeInstanceOf(HostTimeoutError);
  });

  it("a call that answers in time resolves with its value, its signal is never aborted, and no timer is left", async () => {
    let signal!: AbortSignal;
    const result = withTimeout("messages read", 2000, async (s) => {
      signal = s;
      await new Promise((resolve) => setTimeout(resolve, 1999));
      return ["m1", "m2"];
    });
    await vi.advanceTimersByTimeAsync(1999);
    await expect(result).resolves.toEqual(["m1", "m2"]);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(signal.aborted).toBe(false);
  });

  it("a call that fails in time rejects with its own error, not a timeout, and no timer is left", async () => {
    const own = new HostHttpError("todo read", 500, "oops");
    const result = withTimeout("todo read", 2000, async () => {
      throw own;
    });
    await expect(result).rejects.toBe(own);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a call that throws before returning a promise is rejected with that error", async () => {
    const own = new TypeError("bad argument");
    await expect(
      withTimeout("session read", 2000, () => {
        throw own;
      }),
    ).rejects.toBe(own);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("each call has its own signal and its own deadline", async () => {
    const signals: AbortSignal[] = [];
    const hang = (s: AbortSignal) => {
      signals.push(s);
      return new Promise<never>(() => {});
    };
    const short = withTimeout("short", 100, hang).catch((e: unknown) => e);
    const long = withTimeout("long", 300, hang).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
    expect(await short).toMatchObject({ message: "short did not answer within 100 ms" });
    await vi.advanceTimersByTimeAsync(200);
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    expect(await long).toMatchObject({ message: "long did not answer within 300 ms" });
  });
});

describe("mayHaveBeenDelivered", () => {
  it.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [422, false],
    [499, false],
    [408, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [529, true],
    [302, true],
  ])("an HTTP %i answer: %s", (status, may) => {
    expect(mayHaveBeenDelivered(new HostHttpError("prompt", status, "x"))).toBe(may);
  });

  it("a refusal's status decides even when its text speaks of a refused connection", () => {
    expect(mayHaveBeenDelivered(new HostHttpError("prompt", 503, "upstream ECONNREFUSED"))).toBe(true);
  });

  it.each([
    [
      "fetch failed, caused by ECONNREFUSED",
      new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:4096") }),
    ],
    [
      "fetch failed, caused by an error whose code says refused",
      new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } }),
    ],
    [
      "Bun's ConnectionRefused",
      new Error("Unable to connect. Is the computer able to access the url? ConnectionRefused"),
    ],
    ["Bun's FailedToOpenSocket", new Error("FailedToOpenSocket: Was there a typo in the url or port?")],
    ["connection refused, in any case", new Error("Connection Refused by peer")],
    ["a refusal in the message itself", new Error("connect ECONNREFUSED ::1:4096")],
  ])("a connection never made (%s): not delivered", (_, error) => {
    expect(mayHaveBeenDelivered(error)).toBe(false);
  });

  it.each([
    ["fetch failed with no cause (nothing says it was refused)", new TypeError("fetch failed")],
    [
      "fetch failed, caused by a reset connection",
      new TypeError("fetch failed", { cause: new Error("socket hang up (ECONNRESET)") }),
    ],
    [
      "fetch failed, caused by a closed socket",
      new TypeError("fetch failed", { cause: new Error("other side closed") }),
    ],
    ["a timeout", new HostTimeoutError("prompt", 30_000)],
    ["an abort", new DOMException("This operation was aborted", "AbortError")],
    ["anything else thrown", "something odd"],
    ["nothing at all", undefined],
  ])("%s: may have been delivered", (_, error) => {
    expect(mayHaveBeenDelivered(error)).toBe(true);
  });
});

describe("withCause", () => {
  it("adds an Error's cause in parentheses", () => {
    const error = new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:4096") });
    expect(withCause(error)).toBe("fetch failed (connect ECONNREFUSED 127.0.0.1:4096)");
  });

  it("puts a cause that is no Error into words too", () => {
    expect(withCause(new Error("fetch failed", { cause: "reset" }))).toBe("fetch failed (reset)");
    expect(withCause(new Error("fetch failed", { cause: { code: "ECONNRESET" } }))).toBe(
      'fetch failed ({"code":"ECONNRESET"})',
    );
  });

  it("is the message alone when there is no cause, and the words of anything that is no Error", () => {
    expect(withCause(new Error("plain"))).toBe("plain");
    expect(withCause("text thrown")).toBe("text thrown");
    expect(withCause({ status: 500 })).toBe('{"status":500}');
  });
});

describe("errorMessage", () => {
  it("an Error's message, a string as it is, anything else as JSON", () => {
    expect(errorMessage(new RangeError("out of range"))).toBe("out of range");
    expect(errorMessage("as it is")).toBe("as it is");
    expect(errorMessage({ name: "APIError", status: 529 })).toBe('{"name":"APIError","status":529}');
    expect(errorMessage(42)).toBe("42");
    expect(errorMessage(null)).toBe("null");
  });

  it("what JSON cannot write (a cycle, a bigint) is put into words by String()", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorMessage(cyclic)).toBe("[object Object]");
    expect(errorMessage(10n)).toBe("10");
  });

  // errorMessage is declared to return a string, but JSON.stringify answers `undefined` (not a string, and no throw)
  // for undefined, a function and a symbol, so those come back as undefined: a `failure` reported with no error logs
  // `{ error: undefined }`, and a caller that treats the answer as a string (e.g. `.slice`) would throw.
  it("anything thrown, even undefined or a function, comes back as a string", () => {
    for (const thrown of [undefined, () => 1, Symbol("s")]) expect(typeof errorMessage(thrown)).toBe("string");
  });
});
