// A person's hand from the page: stop, resume, allow more and wake, each through the same change script as the CLI's
// and the TUI's (store/changes/), audited with source `dashboard`. What it did comes back as one of a fixed set of
// outcomes, which the page says in its own words after the redirect: nothing the request carried is ever echoed.
import { allow } from "../store/changes/allow.js";
import { resume } from "../store/changes/resume.js";
import { stop } from "../store/changes/stop.js";
import { wake } from "../store/changes/wake.js";
import type { EngineStore } from "../store/port.js";
import { scopeOf } from "../store/operator/session-scope.js";
import type { Action } from "./pages/session.js";

export const OUTCOMES = {
  stopped: { text: "Stopped: nothing continues it until it is resumed.", refused: false },
  already_stopped: { text: "It was already stopped.", refused: true },
  resumed: { text: "Resumed: a running enforcer looks at it again within seconds.", refused: false },
  not_held: { text: "Nothing held it: there was nothing to resume.", refused: true },
  allowed: { text: "More allowed: a running enforcer looks at it again within seconds.", refused: false },
  nothing_to_allow: { text: "There was nothing to allow.", refused: true },
  woke: { text: "Woken: a running enforcer counts down and continues it within seconds.", refused: false },
  not_parked: { text: "It is not parked.", refused: true },
  forged: { text: "Refused: the form did not come from this page (reload it and try again).", refused: true },
} as const;
export type Outcome = keyof typeof OUTCOMES;

export async function act(store: EngineStore, sessionId: string, action: Action, now: number): Promise<Outcome> {
  const scope = await scopeOf(store, sessionId, undefined);
  switch (action) {
    case "stop":
      return (await store.change(stop(scope, "dashboard", now))).changed ? "stopped" : "already_stopped";
    case "resume":
      return (await store.change(resume(scope, "dashboard", now))).changed ? "resumed" : "not_held";
    case "allow":
      return (await store.change(allow(scope, {}, "dashboard", now))).changed ? "allowed" : "nothing_to_allow";
    case "wake":
      return (await store.change(wake(scope, "dashboard", now))).woke ? "woke" : "not_parked";
  }
}
