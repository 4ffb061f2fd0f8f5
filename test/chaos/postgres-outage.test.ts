import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lateProxy, type LateProxy } from '../support/late-tcp-proxy.js';
import {
  CONSISTENT,
  createSumBoard,
  makeBatches,
  postSteadily,
  settleAndCheck,
  startDeployment,
  type Deployment,
} from '../support/deployment.js';

let d: Deployment;
let proxy: LateProxy;
let queueClient: Redis;
beforeAll(async () => {
  d = await startDeployment({ workers: 0 });
  // The workers reach Postgres through a proxy the test can take away: to them Postgres is
  // down (connections refused, open ones cut), while the web process keeps accepting events.
  const direct = new URL(d.env.DATABASE_URL!);
  proxy = await lateProxy(Number(direct.port || 5432), direct.hostname);
  await proxy.start();
  const viaProxy = new URL(direct);
  viaProxy.port = String(proxy.port);
  for (let i = 0; i < 2; i += 1) await d.startWorker({ DATABASE_URL: viaProxy.toString() });
  queueClient = new Redis(d.queueRedis.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  queueClient?.disconnect();
  await proxy?.stop();
  await d?.close();
});

describe('Postgres down for many job locks, with a backlog', () => {
  it('every acknowledged event is applied exactly once afterwards, no job fails and none spends an attempt on the outage', async () => {
    await createSumBoard(d, 'pg-outage');
    const batches = makeBatches('pg-outage', 3000, 50, 41);
    // 12 s: six job locks (JOB_LOCK_MS=2000 in the deployment), with every job of the
    // backlog failing again and again meanwhile.
    const outageMs = 12_000;
    let outage: Promise<void> | undefined;
    await postSteadily(d.baseUrl, batches, {
      paceMs: 15,
      onAccepted: (n) => {
        if (n !== 10) return;
        outage = proxy.stop().then(() => new Promise<void>((r) => setTimeout(r, outageMs)));
      },
    });
    await outage;
    await proxy.start();

    expect(await settleAndCheck(d, 'pg-outage', batches)).toMatchObject(CONSISTENT);

    const queue = new Queue('score-events', {
      connection: queueClient,
      prefix: `{${d.env.REDIS_PREFIX}:score-events}`,
    });
    try {
      expect(await queue.getFailedCount()).toBe(0);
      const done = await queue.getCompleted(0, 999);
      expect(done.length).toBeGreaterThan(0);
      // Put back while Postgres was away (started more than once), yet no attempt spent on
      // the outage: the one attempt made is the run that completed (BullMQ counts it).
      expect(done.filter((job) => job.attemptsStarted > 1).length).toBeGreaterThan(0);
      expect(done.filter((job) => job.attemptsMade !== 1).map((job) => [job.id, job.attemptsMade])).toEqual([]);
    } finally {
      await queue.close();
    }
  });
});
