// The HTTP calls to one followed OpenCode server, a few at a time. Node's fetch opens a connection for every request
// in flight and keeps it open after, so a replica's connections follow its busiest moment: taking over a hundred
// servers and catching up on their sessions at once, the simulated fleet's process reached 20,000 open files. Bounded
// per server, a replica holds at most that many connections to each, plus its event stream.
import PQueue from "p-queue";

/** Requests to one server in flight at once, its event stream aside: a look reads todos, messages and status together. */
export const REQUESTS_PER_SERVER = 4;

/** Statuses whose response has no body, which a Response cannot be built with. */
const NO_BODY = new Set([101, 204, 205, 304]);

/** A fetch for one server's client: its event stream goes at once, the rest waits for one of `limit` turns. */
export function boundedFetch(limit = REQUESTS_PER_SERVER): (request: Request) => Promise<Response> {
  const turns = new PQueue({ concurrency: limit });
  return (request) => {
    // Long-lived, with a connection of its own: it must not hold a turn, nor wait behind the reads.
    if (new URL(request.url).pathname.endsWith("/event")) return fetch(request);
    return turns.add(
      async () => {
        const response = await fetch(request);
        // The connection is busy until its body is read, and back in fetch's pool only a tick after: the turn ends
        // then, so that the next call reuses it instead of opening another (8 sockets for 4 turns without the tick).
        const body = NO_BODY.has(response.status) ? null : await response.arrayBuffer();
        await new Promise((resolve) => setImmediate(resolve));
        const { status, statusText, headers } = response;
        return new Response(body, { status, statusText, headers });
      },
      { signal: request.signal },
    );
  };
}
