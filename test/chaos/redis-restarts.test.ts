import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
beforeAll(async () => {
  d = await startDeployment({ workers: 2 });
});
afterAll(() => d?.close());

describe('a Redis goes away in the middle of a stream', () => {
  it('the leaderboard Redis crashes and comes back empty: reads never fail with 500, rankings are rebuilt from Postgres', async () => {
    await createSumBoard(d, 'lb-lost');
    const batches = makeBatches('lb-lost', 4000, 100, 21);
    const readsDuringOutage: number[] = [];
    await postSteadily(d.baseUrl, batches, {
      paceMs: 20,
      onAccepted: async (n) => {
        if (n !== 12) return;
        await d.leaderboardRedis.crash();
        for (let i = 0; i < 5; i += 1) {
          readsDuringOutage.push((await d.api('GET', '/v1/boards/lb-lost/standings?period=all&limit=10')).status);
          await new Promise((r) => setTimeout(r, 100));
        }
        await d.leaderboardRedis.start();
      },
    });

    // Down: answered from Postgres (200) or refused (503); never a 500.
    expect(readsDuringOutage.every((s) => s === 200 || s === 503)).toBe(true);
    expect(await settleAndCheck(d, 'lb-lost', batches)).toMatchObject(CONSISTENT);
  });

  it('the queue Redis (AOF on) crashes and restarts: every 202 survives, intake answers 503 meanwhile', async () => {
    await createSumBoard(d, 'queue-restart');
    const batches = makeBatches('queue-restart', 4000, 100, 22);
    let restarted: Promise<void> | undefined;
    const result = await postSteadily(d.baseUrl, batches, {
      paceMs: 20,
      onAccepted: async (n) => {
        // Workers frozen first, so that accepted batches sit in the queue when it crashes:
        // only the AOF can bring them back (run without it, this test loses ~700 events).
        if (n === 6) for (const w of d.workers) w.freeze();
        if (n !== 12) return;
        await d.queueRedis.crash();
        // Stays down long enough for intake to refuse batches and workers to lose their connections.
        restarted = new Promise((r) => setTimeout(r, 1500))
          .then(() => d.queueRedis.start())
          .then(() => {
            for (const w of d.workers) w.thaw();
          });
      },
    });
    await restarted;

    expect(result.statuses['503']).toBeGreaterThan(0);
    expect(result.statuses['500']).toBeUndefined();
    expect(await settleAndCheck(d, 'queue-restart', batches)).toMatchObject(CONSISTENT);
  });
});
