import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

export interface PrivateRedis {
  url: string;
  port: number;
  /** Crash it (SIGKILL): a volatile one loses everything, an AOF one keeps what it acknowledged. */
  crash(): Promise<void>;
  /** Starts it again on the same port and directory, and waits until it answers. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open and nothing answers, until `thaw()` (SIGCONT). */
  freeze(): void;
  thaw(): void;
  /** Stops it for good and removes its directory. */
  stop(): Promise<void>;
}

/**
 * A redis-server of the test's own on 127.0.0.1, so that a test may crash, restart or flush
 * it without touching the machine's shared Redis. `persistent` turns on the AOF, the way
 * production must run the queue Redis; `notYet` leaves it stopped until `start()`.
 */
export async function startPrivateRedis(
  options: { persistent?: boolean; notYet?: boolean } = {},
): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'laurel-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    options.persistent ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--daemonize',
    'no',
    '--logfile',
    path.join(dir, 'redis.log'),
  ];
  let child: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}/0`;

  const start = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // refused until the server listens: expected here
    try {
      for (let i = 0; ; i += 1) {
        const ok = await probe
          .connect()
          .then(
            () => probe.ping(),
            () => null,
          )
          .catch(() => null);
        // PING answers LOADING while an AOF replays; wait for a real PONG.
        if (ok === 'PONG') return;
        probe.disconnect();
        if (i > 200) throw new Error(`private redis on ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      probe.disconnect();
    }
  };
  const crash = async () => {
    const running = child;
    // A process killed by a signal has signalCode set and exitCode null: it is gone all the same.
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  // notYet: the port is chosen but nothing listens on it until start() (a dependency down at start).
  if (!options.notYet) await start();
  return {
    url,
    port,
    crash,
    start,
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
    async stop() {
      child?.kill('SIGCONT');
      await crash();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
