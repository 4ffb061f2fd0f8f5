import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import autocannon from 'autocannon';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Starts a process of the bench. Laurel's own (`src/bin/...`) run from the compiled build in
 * dist/, as production runs them (`buildLaurel()` first); the bench's helpers from source.
 */
export function startProcess(entry: string, env: Record<string, string>): ChildProcess {
  // BENCH_CPU_PROF=1: each process writes a V8 CPU profile on exit (bench/results/profiles/,
  // summarised by `npx tsx bench/profile-summary.ts <file>`).
  const profile =
    process.env.BENCH_CPU_PROF === '1'
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench/results/profiles')}`]
      : [];
  const laurel = entry.startsWith('src/');
  // BENCH_WORKER_HEAP_MB=n caps the workers' V8 heap: a rebuild that finishes under a small
  // cap shows its memory is bounded, whatever its peak RSS when V8 may grow freely.
  const heap =
    entry === 'src/bin/worker.ts' && process.env.BENCH_WORKER_HEAP_MB
      ? [`--max-old-space-size=${process.env.BENCH_WORKER_HEAP_MB}`]
      : [];
  const run = laurel ? [path.join('dist', entry.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', entry];
  return spawn(process.execPath, [...profile, ...heap, ...run], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** `npm run build`: what `startProcess` runs Laurel from. */
export function buildLaurel(): void {
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Peak resident set size of a process so far (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Closed loop: `concurrency` callers, each sending the next request when the last answers. */
export async function closedLoop(seconds: number, concurrency: number, call: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const t = performance.now();
        await call(n++);
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    rps: round(latencies.length / seconds, 0),
    p50Ms: round(quantile(latencies, 0.5), 3),
    p99Ms: round(quantile(latencies, 0.99), 3),
  };
}

/** Open loop: requests start at a fixed rate whatever the answers do (no coordinated omission). */
export async function openLoop(seconds: number, ratePerSec: number, call: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  const total = Math.round(seconds * ratePerSec);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = start + (i * 1000) / ratePerSec;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(call(i).then(() => void latencies.push(performance.now() - due)));
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  return { rate: ratePerSec, p50Ms: round(quantile(latencies, 0.5), 3), p99Ms: round(quantile(latencies, 0.99), 3) };
}

/**
 * HTTP load with autocannon (a load generator far lighter than fetch, so the client is not
 * what is measured), closed loop with `connections`. Fixed rates use openLoopHttp.
 */
export async function http(options: {
  url: string;
  paths: string[];
  headers: Record<string, string>;
  seconds: number;
  connections: number;
}) {
  let i = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
    requests: [{ setupRequest: (req: any) => ({ ...req, path: options.paths[i++ % options.paths.length] }) }],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`load run had ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return { rps: round(result.requests.average, 0), p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
}

/**
 * `amount` JSON POSTs from `connections` clients at once (autocannon, closed loop), each with
 * its own body; resolves when the last is answered. A 503 (intake refusing while the queue is
 * slow or full) is counted, not fatal; anything else but a 2xx fails the run.
 */
export async function httpPosts(options: {
  url: string;
  path: string;
  headers: Record<string, string>;
  connections: number;
  amount: number;
  body: (i: number) => string;
}) {
  let i = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    amount: options.amount,
    method: 'POST',
    headers: { ...options.headers, 'content-type': 'application/json' },
    requests: [
      { method: 'POST', setupRequest: (req: any) => ({ ...req, path: options.path, body: options.body(i++) }) },
    ],
  });
  const unavailable = (result.statusCodeStats as Record<string, { count: number } | undefined>)['503']?.count ?? 0;
  if (result.non2xx > unavailable || result.errors > 0)
    throw new Error(`POST run had ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return {
    rps: round(result.requests.average, 0),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    refused: unavailable,
  };
}

/** p-quantile of a Prometheus histogram given cumulative bucket counts (as histogram_quantile does). */
export function histogramQuantile(buckets: Array<{ le: number; count: number }>, q: number): number {
  const total = buckets[buckets.length - 1]!.count;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (!Number.isFinite(b.le)) return prevLe;
      return prevLe + ((b.le - prevLe) * (rank - prevCount)) / Math.max(1, b.count - prevCount);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

export function parseHistogram(text: string, name: string): Array<{ le: number; count: number }> {
  const out: Array<{ le: number; count: number }> = [];
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`).exec(line);
    if (m) out.push({ le: m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), count: Number(m[2]) });
  }
  return out;
}

/**
 * HTTP at a fixed arrival rate, open loop: each request is due at its slot and its latency
 * counts from that slot, whether or not earlier answers came back (autocannon's overallRate
 * waits for a free connection, so a saturated server would hide its queue). Keep-alive
 * connections, as many as needed.
 */
export async function openLoopHttp(options: {
  url: string;
  paths: string[];
  headers: Record<string, string>;
  seconds: number;
  rate: number;
  /** A JSON body per request: POSTs instead of GETs. */
  body?: (i: number) => string;
}) {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  let failures = 0;
  const method = options.body ? 'POST' : 'GET';
  const headers = options.body ? { ...options.headers, 'content-type': 'application/json' } : options.headers;
  const call = (i: number) =>
    new Promise<void>((resolve) => {
      const req = request(
        `${options.url}${options.paths[i % options.paths.length]}`,
        { agent, method, headers },
        (res) => {
          if ((res.statusCode ?? 500) >= 300) failures += 1;
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', () => {
        failures += 1;
        resolve();
      });
      req.end(options.body?.(i));
    });
  const result = await openLoop(options.seconds, options.rate, call);
  agent.destroy();
  if (failures > 0) throw new Error(`open-loop run had ${failures} failed requests`);
  return result;
}

/**
 * The bench's own queue Redis, configured as the shipped configs run it: AOF with
 * `appendfsync always` (a 202 survives a host crash), `noeviction` and a memory limit, so the
 * figures hold for a durable 202. Returns its URL, its pid and a stop.
 */
export async function startQueueRedis(port: number): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'laurel-bench-queue-'));
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory', '2gb', '--maxmemory-policy', 'noeviction'],
      ...['--daemonize', 'no', '--logfile', path.join(dir, 'redis.log')],
    ],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}/0`;
  const { Redis } = await import('ioredis');
  await waitFor(
    async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    },
    30_000,
    'the queue Redis',
  );
  return {
    url,
    pid: child.pid!,
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
