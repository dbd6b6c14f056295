// One idle walked through a real engine (a SQLite file, a FakeHost), from OpenCode's `session.idle` to the prompt
// call and its recorded outcome, with every call between the engine's parts written down in order: which part and
// method, in which file, and what it cost — guard runs, OpenCode reads, lane entries, store reads and changes.
// docs/architecture.md's hop list is checked against it (test/docs/idle-walk.test.ts), and
// `npx tsx scripts/walk-idle.ts` prints it.
import { AsyncLocalStorage } from "node:async_hooks";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { resolveConfig } from "../../src/config/resolve.js";
import { Enforcer } from "../../src/engine/enforcer.js";
import { openStore } from "../../src/store/open/open.js";
import type { Script } from "../../src/store/script.js";
import { hostWithOpenTodos } from "./fake-host.js";
import { tempFolder } from "./temp-folders.js";

const ROOT = resolve(import.meta.dirname, "../..");
const ENGINE = join(ROOT, "src", "engine");

export interface Hop {
  /** The source file of the part entered, relative to src/ (`engine/decide/looks.ts`, `store/changes/arm.ts`). */
  file: string;
  /** The file of the part that called it (across awaits: the part whose method the call ran in), if any. */
  from?: string;
  /** `Looks.evaluate`, `store.change arm`, `host.getTodos`… */
  call: string;
}

export interface IdleWalk {
  hops: Hop[];
  /** Times the guard chain ran (core/decide.ts, once per judge's decision). */
  guardRuns: number;
  /** Calls that read OpenCode (todos, messages, session, statuses, children, agents). */
  hostReads: number;
  /** Times OpenCode was read as a whole (one gathering of facts: several reads in parallel). */
  hostGatherings: number;
  laneEntries: number;
  storeReads: number;
  storeChanges: string[];
  /** The distinct files of the hops, in the order first entered. */
  files: string[];
  /** How often consecutive hops are in different folders of src/ (`engine/see` → `engine/decide`…). */
  folderChanges: number;
  /** Calls from a part into a part of another folder, as `from-folder → to-folder` with how many of each. */
  crossings: Record<string, number>;
}

/** The part whose method is running, carried across awaits: who called the next part. */
const caller = new AsyncLocalStorage<string>();

/** The file each class of the engine is declared in, relative to src/. */
function classFiles(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith(".ts"))
        for (const match of readFileSync(path, "utf8").matchAll(/^export class (\w+)/gm))
          found.set(match[1]!, relative(join(ROOT, "src"), path));
    }
  };
  walk(ENGINE);
  return found;
}

/** Parts whose calls are state, not hops: reading what this process remembers is not a step of the path. */
const NOT_HOPS = new Set(["SessionMemories", "BoundedMap", "Lifecycle", "HeldMessages"]);

function instrument(target: object, file: string, label: string, record: (hop: Hop) => void): void {
  const seen = new Set<string>();
  for (let proto = Object.getPrototypeOf(target); proto && proto !== Object.prototype;) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
      if (name === "constructor" || seen.has(name) || typeof descriptor.value !== "function") continue;
      seen.add(name);
      const original = descriptor.value as (...args: unknown[]) => unknown;
      Object.defineProperty(target, name, {
        configurable: true,
        writable: true,
        value: function (this: unknown, ...args: unknown[]) {
          record({ file, call: `${label}.${name}`, from: caller.getStore() });
          return caller.run(file, () => original.apply(this, args));
        },
      });
    }
    proto = Object.getPrototypeOf(proto);
  }
}

/** Walks one idle of a session with two open todos, from the event to the continuation recorded `sent`. */
export async function walkOneIdle(
  around: { before?: () => Promise<unknown>; after?: () => Promise<unknown> } = {},
): Promise<IdleWalk> {
  const folder = tempFolder();
  const store = await openStore(join(folder, "walk.db"));
  const host = hostWithOpenTodos("s1");
  const config = { ...resolveConfig({}, {}), databasePath: join(folder, "walk.db"), countdownSeconds: 0, toast: false };
  const enforcer = new Enforcer({ config, store, host, directory: "/work/walk" });
  await enforcer.start();
  await enforcer.settled();

  const hops: Hop[] = [];
  let tracing = false;
  const record = (hop: Hop) => {
    if (tracing) hops.push(hop);
  };
  const counts = { guardRuns: 0, hostReads: 0, hostGatherings: 0, laneEntries: 0, storeReads: 0 };
  const storeChanges: string[] = [];
  const internals = enforcer as unknown as {
    parts: Record<string, object>;
    ctx: { lanes: object; timers: object; events: object };
  };
  const declaredIn = classFiles();
  const parts = { ...internals.parts, userMessages: (internals.parts.router as { userMessages: object }).userMessages };
  for (const part of [...Object.values(parts), internals.ctx.timers, internals.ctx.events]) {
    const name = part.constructor.name;
    if (NOT_HOPS.has(name)) continue;
    const file = declaredIn.get(name);
    if (!file) throw new Error(`the walk does not know where ${name} is declared`);
    instrument(part, file, name, record);
  }
  const judge = internals.parts.judge as { decide: (...args: unknown[]) => unknown };
  const decide = judge.decide;
  judge.decide = function (...args) {
    if (tracing) counts.guardRuns++;
    return decide.apply(this, args);
  };
  const facts = internals.parts.facts as { gather: (...args: unknown[]) => unknown };
  const gather = facts.gather;
  facts.gather = function (...args) {
    if (tracing) counts.hostGatherings++;
    return gather.apply(this, args);
  };
  const lanes = internals.ctx.lanes as { run: (...args: unknown[]) => unknown };
  const run = lanes.run;
  lanes.run = function (...args) {
    if (tracing) counts.laneEntries++;
    return run.apply(this, args);
  };
  const read = store.read.bind(store);
  store.read = <T>(script: Script<T>) => {
    if (tracing) {
      counts.storeReads++;
      hops.push({ file: "store/reads.ts", call: "store.read", from: caller.getStore() });
    }
    return read(script);
  };
  const change = store.change.bind(store);
  store.change = (c) => {
    if (tracing) {
      storeChanges.push(c.name);
      hops.push({ file: `store/changes/${c.name}.ts`, call: `store.change ${c.name}`, from: caller.getStore() });
    }
    return change(c);
  };
  for (const method of ["getTodos", "getMessages", "getSession", "getChildren", "getStatuses", "getAgents"] as const) {
    const original = host[method].bind(host) as (...args: unknown[]) => unknown;
    (host as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      if (tracing) {
        counts.hostReads++;
        hops.push({ file: "host/port.ts", call: `host.${method}`, from: caller.getStore() });
      }
      return original(...args);
    };
  }
  const prompt = host.prompt.bind(host);
  host.prompt = (request, signal) => {
    if (tracing) hops.push({ file: "host/port.ts", call: "host.prompt", from: caller.getStore() });
    return prompt(request, signal);
  };

  try {
    await around.before?.();
    tracing = true;
    enforcer.handleEvent({ type: "session.idle", properties: { sessionID: "s1" } });
    const deadline = Date.now() + 15_000;
    while (host.prompts.length === 0 && Date.now() < deadline) {
      await enforcer.settled();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await enforcer.settled();
    tracing = false;
    await around.after?.();
    if (host.prompts.length !== 1) throw new Error(`the walked idle made ${host.prompts.length} prompt call(s), not 1`);
  } finally {
    tracing = false;
    await enforcer.dispose();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
  const folderOf = (file: string) => file.slice(0, file.lastIndexOf("/"));
  let folderChanges = 0;
  for (let i = 1; i < hops.length; i++) if (folderOf(hops[i]!.file) !== folderOf(hops[i - 1]!.file)) folderChanges++;
  const crossings: Record<string, number> = {};
  for (const { from, file } of hops) {
    if (!from || folderOf(from) === folderOf(file)) continue;
    const key = `${folderOf(from)} → ${folderOf(file)}`;
    crossings[key] = (crossings[key] ?? 0) + 1;
  }
  const files = [...new Set(hops.map((h) => h.file))];
  return { hops, ...counts, storeChanges, files, folderChanges, crossings };
}
