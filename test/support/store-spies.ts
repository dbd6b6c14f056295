// Ways a test slows down or breaks one kind of state change of a real store (the others run as usual): every change
// goes through `store.change`, named after its file in src/store/changes/.
import type { EngineStore } from "../../src/store/port.js";
import type { Change } from "../../src/store/script.js";
import { deferred } from "./deferred.js";

type Changer = EngineStore["change"];

function intercept(
  store: EngineStore,
  around: (change: Change<unknown>, run: Changer) => Promise<unknown>,
): () => void {
  const original = store.change.bind(store) as Changer;
  store.change = ((change: Change<unknown>) => around(change, original)) as Changer;
  return () => {
    store.change = original;
  };
}

/** The next change named `name` fails with `error` (nothing of it is written). */
export function failChangeOnce(store: EngineStore, name: string, error: Error): () => void {
  let armed = true;
  return intercept(store, (change, run) => {
    if (!armed || change.name !== name) return run(change);
    armed = false;
    return Promise.reject(error);
  });
}

/**
 * Changes named `name` wait for the gate to open: `before` they are written (a slow write), or `after` they are
 * written and before their answer arrives (a slow answer).
 */
export function gateChanges(store: EngineStore, name: string, when: "before" | "after") {
  const gate = deferred();
  const restore = intercept(store, async (change, run) => {
    if (change.name !== name) return run(change);
    if (when === "before") await gate.promise;
    const result = await run(change);
    if (when === "after") await gate.promise;
    return result;
  });
  return { open: () => gate.resolve(), restore };
}

/** The store's heartbeats wait for the gate to open: a database slow to answer the first write of an engine's start. */
export function gateHeartbeats(store: EngineStore) {
  const gate = deferred();
  const original = store.heartbeat.bind(store);
  store.heartbeat = async (...args) => {
    await gate.promise;
    return original(...args);
  };
  return { open: () => gate.resolve() };
}
