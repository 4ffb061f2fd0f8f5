import { createConnection, createServer, type Socket } from 'node:net';
import { freePort } from './free-port.js';

export interface CountingProxy {
  port: number;
  /** Client-to-server writes so far: every statement or round trip a client starts is at least one. */
  readonly writes: number;
  stop(): Promise<void>;
}

/** A plain TCP forwarder that counts what its clients send: how a test sees the round trips a process makes to Postgres. */
export async function countingProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CountingProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let writes = 0;
  const server = createServer((client) => {
    const upstream = createConnection(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => (client.destroy(), upstream.destroy()));
    }
    client.on('data', () => (writes += 1));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port,
    get writes() {
      return writes;
    },
    stop: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
