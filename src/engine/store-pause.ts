// What the engine does while its database does not work, and once it works again (store-health.ts says when). Paused,
// nothing is decided (no decision without its audit row): the countdowns held here are dropped from memory (their
// rows stay this process's and are adopted again), and the user messages held for classification are forgotten.
// Working again, the countdowns are adopted first, then every idle the pause kept from being judged is looked at.
import { STORE_RECOVERED_REASON } from "../core/reasons.js";
import type { EngineContext } from "./context.js";
import type { EngineEvents } from "./engine-events.js";
import type { EngineParts } from "./parts.js";
import type { StoreHealthListener } from "./store-health.js";

export class StorePause implements StoreHealthListener {
  constructor(
    private readonly ctx: EngineContext,
    private readonly parts: Pick<EngineParts, "countdowns" | "router" | "looks">,
  ) {}

  paused(report: EngineEvents["store_paused"]): void {
    const { ctx, parts } = this;
    if (ctx.lifecycle.mode === "running") {
      ctx.lifecycle.enter("paused_store");
      parts.countdowns.dropAll();
      parts.router.userMessages.drop();
    }
    ctx.events.emit("store_paused", report);
  }

  resumed(report: EngineEvents["store_resumed"]): void {
    const { ctx, parts } = this;
    if (ctx.lifecycle.mode === "paused_store") {
      ctx.lifecycle.enter("running");
      void ctx.track(
        parts.countdowns.recover(STORE_RECOVERED_REASON).then((recovered) => {
          // After the countdowns are held again: a look at a session whose countdown survived finds it armed here.
          parts.looks.lookAgainAtUnjudged();
          return recovered;
        }),
      );
    }
    ctx.events.emit("store_resumed", report);
  }
}
