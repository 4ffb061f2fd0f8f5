import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * Load shedding: past INTAKE_MAX_IN_FLIGHT requests in flight, intake answers 503 with
 * Retry-After at once (nothing accepted) instead of holding the request for seconds.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { INTAKE_MAX_IN_FLIGHT: '2', INTAKE_GROUP_WINDOW_MS: '0' } });
  expect((await h.api('PUT', '/v1/boards/shed', { aggregation: 'sum', period: 'all' })).status).toBe(201);
});
afterAll(() => h.close());

const event = (key: string) => ({ board: 'shed', member: 'ann', value: 1, idempotencyKey: key });

describe('intake load shedding', () => {
  it('refuses the request past the limit at once with 503 and Retry-After; the ones in flight are accepted', async () => {
    // The queue add is held, so the first two requests stay in flight.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let adds = 0;
    h.faults.beforeGroupAdd = async () => {
      adds += 1;
      await held;
    };
    try {
      const first = h.api('POST', '/v1/events', event('shed-1'));
      const second = h.api('POST', '/v1/events', event('shed-2'));
      while (adds < 2) await new Promise((r) => setTimeout(r, 5));
      const started = Date.now();
      const third = await h.api('POST', '/v1/events', event('shed-3'));
      expect(third.status).toBe(503);
      expect(third.headers.get('retry-after')).toBe('1');
      expect(third.body.message).toMatch(/at capacity.*nothing was accepted/);
      expect(Date.now() - started).toBeLessThan(2000);
      release();
      expect([(await first).status, (await second).status]).toEqual([202, 202]);
    } finally {
      h.faults.beforeGroupAdd = undefined;
      release();
    }
    await h.drain();
    expect((await h.api('GET', '/v1/events/shed-3')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/shed/standings/ann?period=all')).body.score).toBe(2);
    // Once the requests in flight are answered, the next one is admitted.
    expect((await h.api('POST', '/v1/events', event('shed-3'))).status).toBe(202);
  });
});

describe('intake load shedding by queue lag', () => {
  it('answers 503 with Retry-After while the oldest waiting job is older than INTAKE_MAX_QUEUE_LAG_MS', async () => {
    // No workers: what is queued stays waiting.
    const lagged = await createHarness({ workers: false, env: { INTAKE_MAX_QUEUE_LAG_MS: '800' } });
    try {
      expect((await lagged.api('PUT', '/v1/boards/lag', { aggregation: 'sum', period: 'all' })).status).toBe(201);
      const lagEvent = (key: string) => ({ board: 'lag', member: 'ann', value: 1, idempotencyKey: key });
      expect((await lagged.api('POST', '/v1/events', lagEvent('lag-1'))).status).toBe(202);
      await new Promise((r) => setTimeout(r, 2200)); // past the bound and past a reading's age
      await lagged.api('POST', '/v1/events', lagEvent('lag-probe')); // refreshes the reading in the background
      await new Promise((r) => setTimeout(r, 200));
      const refused = await lagged.api('POST', '/v1/events', lagEvent('lag-2'));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body.message).toMatch(/behind.*nothing was accepted/);
      expect(await lagged.ctx.scoreQueue.getWaitingCount()).toBeLessThanOrEqual(2);
    } finally {
      await lagged.close();
    }
  });
});
