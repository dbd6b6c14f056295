// The OpenCode servers a fleet of service replicas shares (`todo-continuation servers …`), and which replica follows
// each: a server is leased to one replica at a time, held while that replica's heartbeat is fresh by the database's
// clock. Only a database several hosts share can serve a fleet: PostgreSQL (pg/server-roster.ts).

export interface ServerRow {
  /** How rows name the server (`sessions.server` and the others). */
  name: string;
  /** Its base URL, without credentials. */
  url: string;
  /** The project directory whose sessions are followed. */
  directory: string;
  username: string | null;
  /** The environment variable each replica reads the server's password from (never the password). */
  passwordEnv: string | null;
  addedAt: number;
  owner: string | null;
  /** When the current owner took it (the database's clock). */
  ownedSince: number | null;
  /** Until when its last follower had the event stream (the database's clock): a successor catches up from there. */
  seenUntil: number | null;
}

export interface NewServer {
  name: string;
  url: string;
  directory: string;
  username?: string | null;
  passwordEnv?: string | null;
}

export interface ServerState extends ServerRow {
  /** Whether `owner` is a replica whose heartbeat is fresh now. */
  followed: boolean;
  /** How long ago its follower last had the event stream, by the database's clock. */
  seenAgoMs: number | null;
}

/** What one round of sharing decided for a replica. */
export interface Share {
  /** The servers this replica holds after the round (taken now or before), by name. */
  held: ServerRow[];
  /** Servers it holds beyond its share: to stop following and hand back (`handBack`) for a replica with fewer. */
  excess: string[];
  /** Fleet replicas alive now, this one included. */
  replicas: number;
  /**
   * How long until the first other live replica's lease runs out unless it renews it, by the database's clock (null
   * when this replica is alone): a replica that died is found out then, not at the next round.
   */
  nextLapseInMs: number | null;
}

export class ServerExistsError extends Error {
  constructor(readonly serverName: string) {
    super(`a server named "${serverName}" is already listed (remove it first, or pick another --name)`);
    this.name = "ServerExistsError";
  }
}

export interface ServerRoster {
  add(server: NewServer): Promise<ServerRow>;
  /** False when no server has that name. Its follower lets it go at its next round. */
  remove(name: string): Promise<boolean>;
  get(name: string): Promise<ServerRow | undefined>;
  /** Every server, with whether a live replica follows it and how fresh its stream was. */
  list(): Promise<ServerState[]>;
  /**
   * One round of sharing for `replica` (whose heartbeat the caller has just written): every live fleet replica's
   * share is the same within one, a server whose owner is no longer alive is free, and this replica takes free
   * servers up to its share. Servers beyond its share are named in `excess`, not released here. A server it took
   * less than `settleMs` ago is not named (its follower is busy with what the previous one left: adopted countdowns
   * firing late, sessions to catch up on): another goes instead, or it goes at a later round.
   */
  share(replica: string, settleMs?: number): Promise<Share>;
  /** Hands servers back (if still this replica's), so that a replica with fewer takes them at its next round. */
  handBack(replica: string, names: string[]): Promise<void>;
  /** Records that this replica has the event streams of `names` now: a successor catches up from here. */
  seen(replica: string, names: string[]): Promise<void>;
}
