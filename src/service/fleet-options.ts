// What a fleet replica (fleet.ts) is given, and what it says of itself.
import type { Config } from "../config/resolve.js";
import type { NoticeChannels } from "../engine/notice-sender.js";
import type { LogLevel } from "../host/port.js";
import type { OperatorStore } from "../store/operator/operator.js";

type Log = (level: LogLevel, message: string, extra?: Record<string, unknown>) => void;

export interface FleetOptions {
  /** The database the followers' engines share, opened as a `fleet` replica: one that can serve a fleet (a roster). */
  store: OperatorStore;
  /**
   * A pool of its own for the sharing rounds and the leases' renewal (default: `store`): a burst of state changes
   * queued for the shared pool must not delay them past the lease, or the others would take this replica's servers
   * while it is only busy. (The heartbeat itself goes through `store`, which keeps a connection for it.)
   */
  liveness?: OperatorStore;
  config: Config;
  /** Where notices go, for every server followed; none: nothing is sent. */
  noticeChannels?: NoticeChannels;
  log: Log;
  /** Where the servers' passwords are read from (`servers.password_env` names the variable). */
  env?: NodeJS.ProcessEnv;
  /**
   * How far before a server's last recorded stream a successor starts catching up: the database's clock and the
   * OpenCode servers' clocks differ, and an idle seen just before the predecessor died may not have been decided.
   */
  catchUpMarginMs?: number;
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  /** A followed stream silent this long is replaced (StandaloneService's `silenceMs`). */
  silenceMs?: number;
  /** How long a starting replica waits for others starting with it before its first share (ms). */
  settleMs?: number;
  /** Called when this replica takes a server over (the metrics count it). */
  onTakeover?: () => void;
  /** Called when a followed server's event stream connects again after it dropped. */
  onReconnected?: () => void;
}

export interface FleetStats {
  id: string;
  following: string[];
  replicas: number;
}
