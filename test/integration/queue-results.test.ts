import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

describe('what ?wait=true leaves in the queue Redis', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
    for (const board of ['qr-a', 'qr-b'])
      expect((await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'all' })).status).toBe(201);
  });
  afterAll(() => h.close());

  it('answers each result with its own key and board, and no key reaches the events stream', async () => {
    const events = [
      { board: 'qr-a', member: 'qr-player', value: 5, idempotencyKey: 'match-7781:qr-player' },
      { board: 'qr-b', member: 'qr-player', value: 2, idempotencyKey: 'match-7781:qr-player' },
      { board: 'qr-a', member: 'qr-other', value: 9, idempotencyKey: 'match-7781:qr-other' },
    ];
    const res = await h.api('POST', '/v1/events?wait=true', { events });
    expect(res.status).toBe(200);
    expect(
      (res.body.results as Array<Record<string, unknown>>).map(({ idempotencyKey, board, status, score, rank }) => ({
        idempotencyKey,
        board,
        status,
        score,
        rank,
      })),
    ).toEqual([
      { idempotencyKey: 'match-7781:qr-player', board: 'qr-a', status: 'applied', score: 5, rank: 2 },
      { idempotencyKey: 'match-7781:qr-player', board: 'qr-b', status: 'applied', score: 2, rank: 1 },
      { idempotencyKey: 'match-7781:qr-other', board: 'qr-a', status: 'applied', score: 9, rank: 1 },
    ]);
    // BullMQ keeps the job's return value in its events stream for hours, where an erasure
    // cannot find it by member: it holds outcomes, never a key.
    const stream = await h.ctx.queueRedis.xrange(h.ctx.scoreQueue.keys.events!, '-', '+');
    const completed = stream.filter(([, fields]) => fields.includes('completed'));
    expect(completed.length).toBeGreaterThan(0);
    const text = JSON.stringify(stream);
    expect(text).toContain('applied');
    expect(text).not.toContain('match-7781');
  });
});
