// PostgreSQL's view of which owners are alive between heartbeats: what each look found, and nothing else, decides it.
import { describe, expect, it } from "vitest";
import { LiveOwners } from "../../src/store/pg/live-owners.js";

describe("LiveOwners", () => {
  it("knows no owner before a look", () => {
    expect(new LiveOwners().wasFresh("host/1")).toBe(false);
  });

  it("a heartbeat's read replaces the view whole: an owner it did not find is no longer fresh", () => {
    const owners = new LiveOwners();
    owners.refreshed(["host/1", "host/2"]);
    expect([owners.wasFresh("host/1"), owners.wasFresh("host/2")]).toEqual([true, true]);
    owners.refreshed(["host/2", "other/3"]);
    expect([owners.wasFresh("host/1"), owners.wasFresh("host/2"), owners.wasFresh("other/3")]).toEqual([
      false,
      true,
      true,
    ]);
    owners.refreshed([]);
    expect(owners.wasFresh("host/2")).toBe(false);
  });

  it("a look at one owner's heartbeat changes only that owner, whichever way it found it", () => {
    const owners = new LiveOwners();
    owners.refreshed(["host/1"]);
    owners.looked("host/2", true);
    expect([owners.wasFresh("host/1"), owners.wasFresh("host/2")]).toEqual([true, true]);
    owners.looked("host/1", false);
    expect([owners.wasFresh("host/1"), owners.wasFresh("host/2")]).toEqual([false, true]);
  });

  it("a retired owner is not fresh, until a later look finds its heartbeat again", () => {
    const owners = new LiveOwners();
    owners.refreshed(["host/1", "host/2"]);
    owners.retired("host/1");
    expect([owners.wasFresh("host/1"), owners.wasFresh("host/2")]).toEqual([false, true]);
    owners.refreshed(["host/1"]);
    expect(owners.wasFresh("host/1")).toBe(true);
  });
});
