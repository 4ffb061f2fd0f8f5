import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Env } from '../config/env.js';
import { ipBudgetId } from './rate-limit.js';

export type ServerLimits = Pick<
  Env,
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
  | 'HTTP_MAX_CONNECTIONS'
  | 'HTTP_PENDING_CONNECTIONS_PER_IP'
>;

/**
 * Every HTTP server Laurel starts goes through here, so none keeps Node's defaults (5 min
 * for a trickled body, no cap on connections): a client that sends slowly or not at all
 * is answered 408 and dropped, and a flood of idle sockets cannot exhaust descriptors.
 */
export function createHttpServer(handler: RequestListener, limits: ServerLimits): Server {
  const server: Server = createServer(
    {
      headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: limits.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: limits.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.HTTP_HEADERS_TIMEOUT_MS / 2)),
    },
    // Once closing, every answer ends its connection: a client that keeps posting on a
    // kept-alive socket would otherwise hold the server open past its shutdown timeout.
    (req, res) => {
      pending.get(req.socket)?.();
      if (closing.has(server)) res.setHeader('Connection', 'close');
      handler(req, res);
    },
  );
  server.maxConnections = limits.HTTP_MAX_CONNECTIONS;
  const pending = capPendingConnections(server, limits.HTTP_PENDING_CONNECTIONS_PER_IP);
  return server;
}

/** How long a connection may go without its first request's headers before it counts as slow. */
export const SLOW_PENDING_MS = 1_000;

/**
 * The headers timeout drops a connection that sends its headers slowly, but only after
 * seconds, and one address can open thousands meanwhile. A connection still without its
 * first request's headers after `SLOW_PENDING_MS` counts against its address; an address
 * holding `cap` such connections has its next one closed at once. Only the slow ones count:
 * a burst of a thousand quick requests from one game server (or one proxy) is not refused,
 * however many of its connections are open before their headers are parsed. A connection
 * leaves the count at its first request or when it closes. Only first requests are watched:
 * an idle kept-alive connection looks like a slow one, and pools keep many; a later request
 * sent slowly on a kept-alive connection is bounded by the headers timeout alone. Returns, per socket, the
 * function that takes it out of the count.
 */
function capPendingConnections(server: Server, cap: number): WeakMap<Socket, () => void> {
  const release = new WeakMap<Socket, () => void>();
  if (cap <= 0) return release;
  const slowByAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = ipBudgetId(socket.remoteAddress);
    if ((slowByAddress.get(address) ?? 0) >= cap) return void socket.destroy();
    let counted = false;
    const timer = setTimeout(() => {
      // Timers run before sockets are read: after a pause of the event loop (a long GC),
      // headers waiting in the kernel are parsed first, so a quick connection is not counted.
      setImmediate(() => {
        if (!release.has(socket)) return;
        counted = true;
        slowByAddress.set(address, (slowByAddress.get(address) ?? 0) + 1);
      });
    }, SLOW_PENDING_MS);
    timer.unref();
    const done = () => {
      if (!release.delete(socket)) return;
      clearTimeout(timer);
      if (!counted) return;
      const left = (slowByAddress.get(address) ?? 1) - 1;
      if (left > 0) slowByAddress.set(address, left);
      else slowByAddress.delete(address);
    };
    release.set(socket, done);
    socket.once('close', done);
  });
  return release;
}

const closing = new WeakSet<Server>();
const IDLE_SWEEP_MS = 100;

/**
 * Stops taking connections and resolves once every open one has ended. Node closes the
 * connections that are idle at the moment of close() only; one that was answering then
 * goes idle a moment later and would wait out its keep-alive timeout, so idle ones are
 * swept until none is left. Requests in flight are answered, never cut.
 */
export function closeGracefully(server: Server): Promise<void> {
  closing.add(server);
  return new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
  });
}
