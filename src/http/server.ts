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
  const server = createServer(
    {
      headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: limits.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: limits.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.HTTP_HEADERS_TIMEOUT_MS / 2)),
    },
    handler,
  );
  server.maxConnections = limits.HTTP_MAX_CONNECTIONS;
  return server;
}
