// The page (src/dashboard) as the service serves it beside its health and metrics on --listen: on loopback, or on any
// address with an access token; without one on another address the service runs and says, once, why the page is off.
import type { Config } from "../../config/resolve.js";
import { refusalFor } from "../../dashboard/access.js";
import type { Dashboard } from "../../dashboard/server.js";
import type { Log } from "../../service/log.js";
import { startStatusServer, type Listen, type StatusSources } from "../../service/status-server.js";
import type { OperatorStore } from "../../store/operator/operator.js";
import { shownLocation } from "../database.js";
import { UsageError } from "../errors.js";
import { pageToken } from "./dashboard.js";

async function servicePage(
  listen: Listen | undefined,
  store: OperatorStore,
  config: Config,
  tokenOption: string | undefined,
  log: Log,
): Promise<Dashboard | undefined> {
  if (!listen) return undefined;
  const token = pageToken(tokenOption);
  const refusal = refusalFor(listen.host, token);
  if (refusal) {
    log("warn", `the page is not served: ${refusal}`);
    return undefined;
  }
  const { Dashboard } = await import("../../dashboard/server.js");
  try {
    return new Dashboard({
      store,
      database: shownLocation(config.databasePath),
      token,
      dailyCap: config.dailyContinuationCost,
      log: (message) => log("warn", `page: ${message}`),
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** What the service serves on --listen: its status server, with the page when it may. */
export interface Listening {
  /** ", status and metrics on URL, the page on URL/": what the start line adds. */
  said: string;
  close(): Promise<void>;
}

/** The status server (and the page) on `listen`; nothing when the service listens nowhere. */
export async function listenFor(
  options: { listen?: Listen; dashboardToken?: string },
  sources: StatusSources | undefined,
  service: { store: OperatorStore; config: Config; log: Log },
): Promise<Listening> {
  if (!options.listen || !sources) return { said: "", close: async () => {} };
  const { store, config, log } = service;
  const page = await servicePage(options.listen, store, config, options.dashboardToken, log);
  const status = await startStatusServer(options.listen, sources, page);
  return {
    said: `, status and metrics on ${status.url}${page ? `, the page on ${status.url}/` : ""}`,
    close: async () => {
      page?.close();
      await status.close();
    },
  };
}
