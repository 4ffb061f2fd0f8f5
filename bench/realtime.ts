/**
 * The realtime part of `npm run bench` (BENCH_ONLY=realtime runs it alone): 10,000 open
 * member streams on one web process of their own, over 1,000 members, while events
 * arrive at 1,000/s across those members. Push lag (visible -> written) comes from the web
 * process's histogram; CPU and RSS from /proc. The stream clients run in a separate process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  histogramQuantile,
  openLoop,
  parseHistogram,
  peakRssMiB,
  ROOT,
  round,
  startProcess,
  stopProcess,
  waitFor,
} from './support.js';

export interface RealtimeSetup {
  env: Record<string, string>;
  port: number;
  adminKey: string;
  seconds: number;
  /** Posts one batch of events (through the bench's main web process). */
  post(events: object[]): Promise<void>;
}

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const MEMBERS = 1000;
const RATE = 1000;
const BOARD = 'realtime';

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return round(kb / 1024, 1);
}

function message<T>(child: ChildProcess, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`stream clients sent no ${type} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const on = (m: { type: string }) => {
      if (m.type !== type) return;
      clearTimeout(timer);
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
  });
}

export async function realtimePart(setup: RealtimeSetup, log: (line: string) => void) {
  const base = `http://127.0.0.1:${setup.port}`;
  const auth = { authorization: `Bearer ${setup.adminKey}` };
  // The web process's own fd limit is the machine's (streams + Redis + Postgres stay far below 20,000 here).
  const web = startProcess('src/bin/web.ts', {
    ...setup.env,
    PORT: String(setup.port),
    WEB_PROCESSES: '1',
    LOG_LEVEL: 'warn',
    // One key and one address open every stream here, as a fleet of game clients behind many
    // keys and addresses would: the per-key and per-address caps are off, the process's
    // cap holds them all (below HTTP_MAX_CONNECTIONS), and connections opened by the
    // thousand are not held to the pending-headers cap meant for one misbehaving client.
    STREAMS_PER_KEY: '0',
    STREAMS_PER_IP: '0',
    STREAMS_MAX: String(Math.max(10_000, STREAMS)),
    HTTP_MAX_CONNECTIONS: String(Math.max(16_384, STREAMS + 1_000)),
    HTTP_PENDING_CONNECTIONS_PER_IP: '0',
  });
  let clients: ChildProcess | undefined;
  try {
    await waitFor(async () => (await fetch(`${base}/readyz`)).ok, 30_000, 'realtime web');
    let seq = 0;
    const batch = (n: number) =>
      Array.from({ length: n }, () => {
        seq += 1;
        return {
          board: BOARD,
          member: `m${Math.floor(Math.random() * MEMBERS)}`,
          value: 1 + (seq % 50),
          idempotencyKey: `rt-${seq}`,
        };
      });
    // Every watched member ranked before the streams open.
    for (let i = 0; i < MEMBERS; i += 500) {
      await setup.post(
        Array.from({ length: 500 }, (_, k) => ({
          board: BOARD,
          member: `m${i + k}`,
          value: 1,
          idempotencyKey: `rt-seed-${i + k}`,
        })),
      );
    }
    log(`realtime: opening ${STREAMS} streams over ${MEMBERS} members`);
    const opening = performance.now();
    clients = fork(path.join(ROOT, 'bench/stream-clients.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        BASE_URL: base,
        ADMIN_KEY: setup.adminKey,
        BOARD,
        STREAMS: String(STREAMS),
        MEMBERS: String(MEMBERS),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const opened = await message<{ firstMessages: number; errors: number }>(clients, 'open', 300_000);
    const openSeconds = round((performance.now() - opening) / 1000, 1);
    log(`  ${opened.firstMessages} streams with their first message in ${openSeconds} s (${opened.errors} errors)`);
    const metrics = async () => (await fetch(`${base}/metrics`, { headers: auth })).text();
    const before = parseHistogram(await metrics(), 'laurel_stream_push_lag_seconds');
    const cpuBefore = cpuSeconds(web.pid!);
    const started = performance.now();
    // 1,000 events/s as 10 batches of 100 a second.
    await openLoop(setup.seconds, RATE / 100, () => setup.post(batch(100)));
    // Let the last changes reach the streams.
    await new Promise((r) => setTimeout(r, 2000));
    const seconds = (performance.now() - started) / 1000;
    const cpuPercent = round(((cpuSeconds(web.pid!) - cpuBefore) / seconds) * 100, 1);
    const after = parseHistogram(await metrics(), 'laurel_stream_push_lag_seconds');
    const delta = after.map((b, i) => ({ le: b.le, count: b.count - (before[i]?.count ?? 0) }));
    clients.send({ type: 'stop' });
    const done = await message<{ messages: number; errors: number }>(clients, 'done', 30_000);
    const result = {
      streams: opened.firstMessages,
      members: MEMBERS,
      eventsPerSec: RATE,
      seconds: round(seconds, 1),
      openSeconds,
      pushLagP50Ms: round(histogramQuantile(delta, 0.5) * 1000, 1),
      pushLagP99Ms: round(histogramQuantile(delta, 0.99) * 1000, 1),
      messagesSent: delta[delta.length - 1]?.count ?? 0,
      messagesReceived: done.messages,
      webCpuPercent: cpuPercent,
      webRssMiB: peakRssMiB(web.pid!),
      webRssAtEndMiB: rssMiB(web.pid!),
      errors: opened.errors + done.errors,
    };
    log(
      `  push lag p50 ${result.pushLagP50Ms} ms, p99 ${result.pushLagP99Ms} ms; ${result.messagesSent} messages sent, ${result.messagesReceived} received; ` +
        `web CPU ${result.webCpuPercent}% of a core, peak RSS ${result.webRssMiB} MiB`,
    );
    return result;
  } finally {
    clients?.kill('SIGTERM');
    await stopProcess(web);
  }
}
