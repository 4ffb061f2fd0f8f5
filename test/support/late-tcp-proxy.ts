import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './free-port.js';

export interface LateProxy {
  port: number;
  /** Starts forwarding: until then nothing listens on `port`, as if the service were down. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Client-to-server writes so far: every statement or round trip a client starts is at least one. */
  readonly writes: number;
}

/**
 * A port where nothing listens until `start()`, then a plain TCP forwarder to the real
 * service: how a test has Postgres "come up" late without stopping the shared server.
 */
export async function lateProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<LateProxy> {
  const port = await freePort();
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  let writes = 0;
  return {
    port,
    get writes() {
      return writes;
    },
    start: () =>
      new Promise((resolve, reject) => {
        server = createServer((client) => {
          const upstream = createConnection(targetPort, targetHost);
          for (const s of [client, upstream]) {
            sockets.add(s);
            s.on('close', () => sockets.delete(s));
            s.on('error', () => (client.destroy(), upstream.destroy()));
          }
          client.on('data', () => (writes += 1));
          client.pipe(upstream).pipe(client);
        });
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      }),
    stop: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        if (!server) return resolve();
        server.close(() => resolve());
      }),
  };
}
