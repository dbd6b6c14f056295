// SessionLanes promises: the jobs of one session run one at a time, in the order they were queued, and a failing job
// does not stop its lane; different sessions never wait for each other; run() settles as its job does; post() never
// rejects (a failure goes to the callback); idle() waits for every lane, jobs queued meanwhile included.
import { describe, expect, it } from "vitest";
import { SessionLanes } from "../../src/engine/session-lanes.js";
import { deferred } from "../support/deferred.js";
import { turn } from "../support/wait-for.js";

function lanes() {
  const errors: unknown[] = [];
  return { lanes: new SessionLanes((error) => errors.push(error)), errors };
}

describe("one session", () => {
  it("a queued job waits until the running one has settled", async () => {
    const { lanes: l } = lanes();
    const log: string[] = [];
    const gate = deferred();
    const first = l.run("s", async () => {
      log.push("first:start");
      await gate.promise;
      log.push("first:end");
    });
    const second = l.run("s", () => log.push("second"));
    await turn();
    await turn();
    expect(log).toEqual(["first:start"]);
    gate.resolve();
    await Promise.all([first, second]);
    expect(log).toEqual(["first:start", "first:end", "second"]);
  });

  it("many jobs with awaits inside never overlap, and run in the order they were queued", async () => {
    const { lanes: l } = lanes();
    let active = 0;
    let maxActive = 0;
    const order: number[] = [];
    const jobs = Array.from({ length: 50 }, (_, i) =>
      l.run("s", async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        for (let k = 0; k < i % 4; k++) await turn();
        order.push(i);
        active--;
        return i;
      }),
    );
    expect(await Promise.all(jobs)).toEqual(order);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(maxActive).toBe(1);
  });

  it("a job queued after an earlier one finished still waits for the one running now", async () => {
    const { lanes: l } = lanes();
    const log: string[] = [];
    const gate = deferred();
    await l.run("s", () => log.push("first"));
    const second = l.run("s", async () => {
      log.push("second:start");
      await gate.promise;
      log.push("second:end");
    });
    // The first job's lane entry is cleaned up by now; the lane must still end in the second job.
    await turn();
    const third = l.run("s", () => log.push("third"));
    await turn();
    expect(log).toEqual(["first", "second:start"]);
    gate.resolve();
    await Promise.all([second, third]);
    expect(log).toEqual(["first", "second:start", "second:end", "third"]);
  });

  it("a failing job rejects its run() with its own error, and the next job still runs after it", async () => {
    const { lanes: l, errors } = lanes();
    const log: string[] = [];
    const gate = deferred();
    const boom = new Error("boom");
    const failing = l.run("s", async () => {
      await gate.promise;
      log.push("failing");
      throw boom;
    });
    const next = l.run("s", () => {
      log.push("next");
      return "ok";
    });
    await turn();
    expect(log).toEqual([]);
    gate.resolve();
    await expect(failing).rejects.toBe(boom);
    await expect(next).resolves.toBe("ok");
    expect(log).toEqual(["failing", "next"]);
    // run() callers handle their own errors: the callback is for post() only.
    expect(errors).toEqual([]);
  });

  it("a job that throws synchronously rejects its run() too", async () => {
    const { lanes: l } = lanes();
    const boom = new Error("sync");
    await expect(
      l.run("s", () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    await expect(l.run("s", () => 42)).resolves.toBe(42);
  });
});

describe("different sessions", () => {
  it("do not wait for each other: one session's stuck job does not hold another's", async () => {
    const { lanes: l } = lanes();
    const stuck = deferred();
    let aDone = false;
    const a = l.run("a", async () => {
      await stuck.promise;
      aDone = true;
    });
    await expect(l.run("b", async () => "b done")).resolves.toBe("b done");
    expect(aDone).toBe(false);
    expect(l.size).toBe(1);
    stuck.resolve();
    await a;
    expect(aDone).toBe(true);
  });

  it("a failure in one session's lane does not touch another's", async () => {
    const { lanes: l } = lanes();
    const failing = l.run("a", () => Promise.reject(new Error("a failed")));
    const fine = l.run("b", () => "b");
    await expect(failing).rejects.toThrow("a failed");
    await expect(fine).resolves.toBe("b");
  });
});

describe("post()", () => {
  it("reports a failure through the callback and resolves undefined instead of rejecting", async () => {
    const { lanes: l, errors } = lanes();
    const boom = new Error("boom");
    const posted = l.post("s", () => {
      throw boom;
    });
    await expect(posted).resolves.toBeUndefined();
    expect(errors).toEqual([boom]);
  });

  it("resolves with the job's value and reports nothing when the job succeeds", async () => {
    const { lanes: l, errors } = lanes();
    await expect(l.post("s", async () => "value")).resolves.toBe("value");
    expect(errors).toEqual([]);
  });

  it("shares the lane with run(): posted and run jobs of one session stay in order", async () => {
    const { lanes: l } = lanes();
    const log: string[] = [];
    const gate = deferred();
    void l.post("s", async () => {
      await gate.promise;
      log.push("posted");
    });
    const ran = l.run("s", () => log.push("run"));
    await turn();
    expect(log).toEqual([]);
    gate.resolve();
    await ran;
    expect(log).toEqual(["posted", "run"]);
  });
});

describe("idle() and size", () => {
  it("size counts the sessions with a job queued or running, and is 0 once idle() resolves", async () => {
    const { lanes: l } = lanes();
    expect(l.size).toBe(0);
    const gate = deferred();
    void l.post("a", () => gate.promise);
    void l.post("a", () => undefined);
    void l.post("b", () => gate.promise);
    void l.post("c", () => Promise.reject(new Error("c")));
    expect(l.size).toBe(3);
    await turn();
    // "c" failed and its lane is gone; "a" and "b" are still held.
    expect(l.size).toBe(2);
    gate.resolve();
    await l.idle();
    expect(l.size).toBe(0);
  });

  it("waits for jobs queued while it waits, in the same and in other sessions", async () => {
    const { lanes: l } = lanes();
    const done: string[] = [];
    void l.post("a", async () => {
      await turn();
      void l.post("a", async () => {
        await turn();
        done.push("a2");
        void l.post("b", async () => {
          await turn();
          done.push("b1");
        });
      });
      done.push("a1");
    });
    await l.idle();
    expect(done).toEqual(["a1", "a2", "b1"]);
    expect(l.size).toBe(0);
  });

  it("does not resolve while a job is still running", async () => {
    const { lanes: l } = lanes();
    const gate = deferred();
    void l.post("s", () => gate.promise);
    let idle = false;
    const waiting = l.idle().then(() => (idle = true));
    await turn();
    await turn();
    expect(idle).toBe(false);
    gate.resolve();
    await waiting;
    expect(idle).toBe(true);
  });

  it("resolves at once when nothing was ever queued", async () => {
    const { lanes: l } = lanes();
    await expect(l.idle()).resolves.toBeUndefined();
  });
});
