// BoundedMap promises a Map that drops its oldest insertion when a new key would exceed the cap.
import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../src/engine/bounded-map.js";

describe("BoundedMap", () => {
  it("holds up to its cap, then drops the oldest insertion for each new key", () => {
    const map = new BoundedMap<string, number>(3);
    map.set("a", 1).set("b", 2).set("c", 3);
    expect([...map.keys()]).toEqual(["a", "b", "c"]);
    map.set("d", 4);
    expect([...map.entries()]).toEqual([
      ["b", 2],
      ["c", 3],
      ["d", 4],
    ]);
    map.set("e", 5);
    expect(map.has("b")).toBe(false);
    expect(map.size).toBe(3);
  });

  it("updating a key at the cap drops nothing, and the key keeps its age (insertion order, not recency)", () => {
    const map = new BoundedMap<string, number>(3);
    map.set("a", 1).set("b", 2).set("c", 3);
    map.set("a", 10);
    expect(map.size).toBe(3);
    expect(map.get("a")).toBe(10);
    map.set("d", 4);
    expect(map.has("a")).toBe(false);
    expect([...map.keys()]).toEqual(["b", "c", "d"]);
  });

  it("a deleted key frees its room", () => {
    const map = new BoundedMap<string, number>(3);
    map.set("a", 1).set("b", 2).set("c", 3);
    map.delete("b");
    map.set("d", 4);
    expect([...map.keys()]).toEqual(["a", "c", "d"]);
  });

  it("is a Map everywhere else", () => {
    const map = new BoundedMap<string, Set<string>>(2);
    expect(map).toBeInstanceOf(Map);
    map.set("x", new Set(["1"]));
    map.get("x")!.add("2");
    expect(map.get("x")).toEqual(new Set(["1", "2"]));
    map.clear();
    expect(map.size).toBe(0);
  });
});
