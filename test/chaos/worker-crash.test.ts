import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSISTENT, createSumBoard, makeBatches, postSteadily, settleAndCheck, startDeployment, type Deployment } from '../support/deployment.js';

let d: Deployment;
beforeAll(async () => {
  d = await startDeployment({ workers: 1 });
});
afterAll(() => d?.close());

describe('a worker process is SIGKILLed in the middle of a batch', () => {
  it('between the Postgres commit and the Redis projection: another worker finishes the batch once', async () => {
    await createSumBoard(d, 'crash-after-commit');
    // This worker holds every batch it takes right after its commit; it dies there.
    const victim = await d.startWorker({ LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS: '600000' }, 'victim');
    const batches = makeBatches('crash-after-commit', 3000, 100, 11);
    const posting = postSteadily(d.baseUrl, batches, { paceMs: 20 });
    const held = await victim.waitForLog((l) => l.fault === 'paused-after-commit', 60_000);
    expect(held.jobId).toBeTruthy();
    await victim.stop('SIGKILL');
    await posting;

    expect(await settleAndCheck(d, 'crash-after-commit', batches)).toMatchObject(CONSISTENT);
  });

  it('at any moment of a busy stream (inside the Postgres transaction too): nothing lost, nothing doubled', async () => {
    await createSumBoard(d, 'crash-anywhere');
    const batches = makeBatches('crash-anywhere', 6000, 200, 12);
    let victim = await d.startWorker({}, 'busy-victim');
    await postSteadily(d.baseUrl, batches, {
      paceMs: 5,
      onAccepted: async (n) => {
        // Kill while batches are being applied, then again after a replacement has started.
        if (n === 8 || n === 20) {
          await victim.stop('SIGKILL');
          victim = await d.startWorker({}, `replacement-${n}`);
        }
      },
    });

    expect(await settleAndCheck(d, 'crash-anywhere', batches)).toMatchObject(CONSISTENT);
  });
});
