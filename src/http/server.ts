import { createServer, type RequestListener, type Server } from 'node:http';
import type { Env } from '../config/env.js';

export type ServerLimits = Pick<
  Env,
  'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS' | 'HTTP_MAX_CONNECTIONS'
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
      if (closing.has(server)) res.setHeader('Connection', 'close');
      handler(req, res);
    },
  );
  server.maxConnections = limits.HTTP_MAX_CONNECTIONS;
  return server;
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
