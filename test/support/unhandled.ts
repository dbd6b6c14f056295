// A promise nobody waits for (a toast sent with `void`) must never reject into nothing: Node would report it, and a
// host running the plugin may crash on it. This collects what Node reports while a test's steps run.
import { turn } from "./wait-for.js";

/**
 * The rejections nobody handled while `steps` ran. Node reports them once the microtasks of a turn have run, before
 * the next turn's immediates: one immediate after the steps is where every one of them has been reported.
 */
export async function unhandledDuring(steps: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on("unhandledRejection", listener);
  try {
    await steps();
    await turn();
  } finally {
    process.off("unhandledRejection", listener);
  }
  return seen;
}
