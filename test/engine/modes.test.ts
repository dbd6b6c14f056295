// Modes promises (src/engine/modes.ts), the one start/stop of every part: a change the owner's table does not allow
// throws a ModeError naming the owner and both modes, and leaves the mode as it was; every start() is the same start,
// its work run once and at once; every stop() is the same stop, its work run once after the start under way, and
// each caller's promise settles only once the owner is stopped (a failed stop rejects for each); a start asked once a
// stop was is refused, and one stopped before it started never starts. The tables of a background loop and of a
// service say the same. The enforcer's own table is lifecycle.test.ts.
import { describe, expect, it } from "vitest";
import { loopModes, ModeError, Modes, startStopModes, type ModeTable } from "../../src/engine/modes.js";
import { deferred } from "../support/deferred.js";

type Light = "off" | "warming" | "on" | "cooling" | "dead";

const LIGHT: ModeTable<Light> = {
  off: ["warming", "cooling"],
  warming: ["on", "cooling"],
  on: ["cooling"],
  cooling: ["dead"],
  dead: [],
};

const light = () =>
  new Modes<Light, string>({
    what: "the lamp",
    table: LIGHT,
    first: "off",
    starting: "warming",
    stopping: "cooling",
    stopped: "dead",
  });

describe("enter()", () => {
  it("goes where the table allows", () => {
    const modes = light();
    modes.enter("warming");
    modes.enter("on");
    expect(modes.mode).toBe("on");
    expect(modes.is("off", "on")).toBe(true);
    expect(modes.is("off")).toBe(false);
  });

  it("refuses any other change with a ModeError naming the owner and both modes, the mode unchanged", () => {
    const modes = light();
    expect(() => modes.enter("on")).toThrow(new ModeError("the lamp", "off", "on"));
    expect(() => modes.enter("on")).toThrow("the lamp cannot go from off to on");
    expect(modes.mode).toBe("off");
  });
});

describe("start()", () => {
  it("enters its starting mode and runs its work once, at once; every call is the same start", async () => {
    const modes = light();
    let runs = 0;
    const work = async () => {
      runs++;
      return "warm";
    };
    const first = modes.start(work);
    expect(runs).toBe(1);
    expect(modes.mode).toBe("warming");
    const second = modes.start(work);
    expect(second).toBe(first);
    expect(await Promise.all([first, second])).toEqual(["warm", "warm"]);
    expect(runs).toBe(1);
  });

  it("without a starting mode, the mode stays where it was (an owner that works from construction on)", async () => {
    const modes = new Modes<Light>({
      what: "the lamp",
      table: LIGHT,
      first: "on",
      stopping: "cooling",
      stopped: "dead",
    });
    await modes.start(async () => undefined);
    expect(modes.mode).toBe("on");
  });

  it("is refused once a stop was asked, during the stop and after it, started before or not", async () => {
    const started = light();
    await started.start(async () => "warm");
    const stopping = started.stop(async () => undefined);
    await expect(started.start(async () => "again")).rejects.toThrow("the lamp was stopped: it cannot start again");
    await stopping;
    await expect(started.start(async () => "again")).rejects.toThrow("the lamp was stopped: it cannot start again");
    const never = light();
    await never.stop(async () => undefined);
    let ran = false;
    await expect(never.start(async () => String((ran = true)))).rejects.toThrow(/cannot start again/);
    expect(ran).toBe(false);
    expect(never.mode).toBe("dead");
  });
});

describe("stop()", () => {
  it("two at once wait for one stop: its work runs once, and neither resolves before the owner is stopped", async () => {
    const modes = light();
    const gate = deferred<void>();
    let runs = 0;
    const work = async () => {
      runs++;
      await gate.promise;
    };
    const settled: string[] = [];
    const first = modes.stop(work).then(() => settled.push(`first:${modes.mode}`));
    const second = modes.stop(work).then(() => settled.push(`second:${modes.mode}`));
    expect(modes.mode).toBe("cooling");
    expect(modes.stopAsked).toBe(true);
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toEqual([]);
    gate.resolve();
    await Promise.all([first, second]);
    expect(settled).toEqual(["first:dead", "second:dead"]);
    expect(runs).toBe(1);
    await modes.stop(work);
    expect(runs).toBe(1);
  });

  it("during a start, waits for the start to end before its work runs; the start sees the stop asked", async () => {
    const modes = light();
    const gate = deferred<void>();
    const order: string[] = [];
    const started = modes.start(async () => {
      await gate.promise;
      order.push(`start ends, stop asked: ${modes.stopAsked}`);
      return "warm";
    });
    const stopped = modes.stop(async () => void order.push("stop's work"));
    await Promise.resolve();
    expect(order).toEqual([]);
    gate.resolve();
    await Promise.all([started, stopped]);
    expect(order).toEqual(["start ends, stop asked: true", "stop's work"]);
    expect(modes.mode).toBe("dead");
  });

  it("after a start that failed, still runs", async () => {
    const modes = light();
    const started = modes.start(async () => {
      throw new Error("no bulb");
    });
    await expect(started).rejects.toThrow("no bulb");
    let ran = false;
    await modes.stop(async () => void (ran = true));
    expect(ran).toBe(true);
  });

  it("whose work fails rejects for every caller with the same error, and the owner is stopped for good", async () => {
    const modes = light();
    const broken = new Error("stuck switch");
    const first = modes.stop(async () => {
      throw broken;
    });
    const second = modes.stop(async () => undefined);
    await expect(first).rejects.toBe(broken);
    await expect(second).rejects.toBe(broken);
    expect(modes.mode).toBe("dead");
  });
});

describe("the shared tables", () => {
  it("a background loop: idle → running at its start, stopping → stopped at its stop; idle may stop at once", async () => {
    const loop = loopModes("the loop");
    expect(loop.mode).toBe("idle");
    await loop.start(async () => undefined);
    expect(loop.mode).toBe("running");
    await loop.stop(async () => undefined);
    expect(loop.mode).toBe("stopped");
    const idle = loopModes("the idle loop");
    await idle.stop(async () => undefined);
    expect(idle.mode).toBe("stopped");
    expect(() => idle.enter("running")).toThrow("the idle loop cannot go from stopped to running");
  });

  it("a service: idle → starting at its start, and the modes its table adds between", async () => {
    const service = startStopModes<"serving">("the service", {
      idle: ["starting", "stopping"],
      starting: ["serving", "stopping"],
      serving: ["stopping"],
      stopping: ["stopped"],
      stopped: [],
    });
    await service.start(async () => service.enter("serving"));
    expect(service.mode).toBe("serving");
    await service.stop(async () => undefined);
    expect(service.mode).toBe("stopped");
  });
});
