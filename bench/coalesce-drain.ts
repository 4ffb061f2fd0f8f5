/**
 * What the score worker drains of one-event jobs, with and without coalescing, HTTP left out
 * (intake's own cost is measured by `npm run bench`): N one-event jobs are queued as intake
 * queues them, then in-process workers (src/bin/worker.ts's startWorkers) run until the queue
 * is empty; "alone" swaps the score handler for one job per run, as before coalescing. Also
 * times one-event jobs queued at a fixed rate (open loop): received -> projected lag.
 * Usage: npx tsx bench/coalesce-drain.ts [jobs, 0 for the lag only] [concurrencies, e.g. 1,4,16] [lag rate/s]
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateDatabase } from '../src/storage/postgres/migrator.js';
import { createContext } from '../src/context.js';
import { parseEnv } from '../src/config/env.js';
import { putBoard } from '../src/services/boards-service.js';
import { payloadHash } from '../src/domain/event.js';
import type { ScoreJob } from '../src/queue/score-events-queue.js';
import { JOB_HANDLERS } from '../src/jobs/job-handlers.js';
import { handler } from '../src/jobs/job-registry.js';
import { processScoreJob } from '../src/services/score-application.js';
import { startWorkers } from '../src/jobs/start-workers.js';
import { histogramQuantile, openLoop, parseHistogram, round, waitFor } from './support.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const jobs = Number(process.argv[2] ?? 3000);
const concurrencies = (process.argv[3] ?? '1,4,16').split(',').map(Number);
const lagRate = Number(process.argv[4] ?? 2000);
const tag = `coalesce${Date.now().toString(36)}`;
const url = new URL(ADMIN_URL);
url.pathname = `/laurel_${tag}`;
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
await admin.query(`CREATE DATABASE "laurel_${tag}"`);
const ctx = createContext(
  parseEnv({
    DATABASE_URL: url.toString(),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
    ADMIN_API_KEY: randomBytes(16).toString('hex'),
    REDIS_PREFIX: tag,
    LOG_LEVEL: 'warn',
  }),
);
const alone = JOB_HANDLERS.map((h) =>
  h.queue === 'score-events' ? handler('score-events', 'apply', (c, data, job) => processScoreJob(c, data, job.id)) : h,
);
let seq = 0;
const oneEventJob = (): ScoreJob => {
  seq += 1;
  const posted = { board: 'drain', member: `m${seq % 50_000}`, value: seq % 1000, idempotencyKey: `${tag}-${seq}` };
  return { events: [{ posted, receivedAt: new Date().toISOString(), payloadHash: payloadHash(posted) }] };
};
const queueEmpty = async () => {
  const c = await ctx.scoreQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(c).every((n) => n === 0);
};

try {
  await migrateDatabase(url.toString());
  await putBoard(ctx, 'drain', { aggregation: 'sum', period: 'all' });
  const lines: string[] = [];
  for (const concurrency of jobs > 0 ? concurrencies : []) {
    for (const mode of ['alone', 'coalesced'] as const) {
      await ctx.scoreQueue.addBulk(Array.from({ length: jobs }, () => ({ name: 'apply', data: oneEventJob() })));
      const started = performance.now();
      const workers = startWorkers(ctx, {
        concurrency,
        schedulers: false,
        ...(mode === 'alone' ? { handlers: alone } : {}),
      });
      await waitFor(queueEmpty, 600_000, 'drain');
      const seconds = (performance.now() - started) / 1000;
      await workers.close();
      lines.push(
        `one-event jobs, ${mode}, concurrency ${concurrency}: ${round(jobs / seconds, 0)} events/s (${jobs} jobs in ${round(seconds, 1)} s)`,
      );
      process.stdout.write(`${lines.at(-1)}\n`);
    }
  }
  // Lag of one-event jobs arriving at a fixed rate, coalesced, at the largest concurrency.
  const workers = startWorkers(ctx, { concurrency: concurrencies.at(-1)!, schedulers: false });
  const before = parseHistogram(await ctx.metrics.registry.metrics(), 'laurel_event_visible_lag_seconds');
  await openLoop(10, lagRate, async () => void (await ctx.scoreQueue.add('apply', oneEventJob())));
  await waitFor(queueEmpty, 120_000, 'lag run to drain');
  const after = parseHistogram(await ctx.metrics.registry.metrics(), 'laurel_event_visible_lag_seconds');
  await workers.close();
  const delta = after.map((b, i) => ({ le: b.le, count: b.count - (before[i]?.count ?? 0) }));
  process.stdout.write(
    `lag of one-event jobs at ${lagRate}/s, coalesced, concurrency ${concurrencies.at(-1)}: p50 ${round(histogramQuantile(delta, 0.5) * 1000, 1)} ms, p99 ${round(histogramQuantile(delta, 0.99) * 1000, 1)} ms\n`,
  );
} finally {
  await ctx.close();
  await admin.query(`DROP DATABASE IF EXISTS "laurel_${tag}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}
