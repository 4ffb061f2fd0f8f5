import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  // No workers: whatever is enqueued stays visible in the queue.
  h = await createHarness({ workers: false });
  await h.api('PUT', '/v1/boards/game', { aggregation: 'best', categories: ['kills'], minValue: 0, maxValue: 1000 });
});
afterAll(() => h.close());

async function queued(): Promise<number> {
  const counts = await h.ctx.scoreQueue.getJobCounts('waiting', 'active', 'delayed');
  return counts.waiting! + counts.active! + counts.delayed!;
}

const ok = (i: number) => ({ board: 'game', member: `m${i}`, value: i, idempotencyKey: `ok-${i}` });

describe('validation of a batch', () => {
  it('answers 400 with per-index details and enqueues nothing when any event is invalid', async () => {
    const before = await queued();
    const res = await h.api('POST', '/v1/events', {
      events: [
        ok(1),
        { ...ok(2), value: 'ten' },
        { ...ok(3), board: 'nope' },
        { ...ok(4), category: 'deaths' },
        { ...ok(5), value: 5000 },
        { ...ok(6), occurredAt: new Date(Date.now() + 3_600_000).toISOString() },
        { ...ok(7), extra: true },
        { board: 'game', value: 1, idempotencyKey: 'no-member' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_failed');
    const byIndex = (i: number) => res.body.details.filter((d: any) => d.index === i).map((d: any) => d.path);
    expect(byIndex(0)).toEqual([]);
    expect(byIndex(1)).toEqual(['value']);
    expect(byIndex(6)).toEqual(['extra']);
    expect(byIndex(7)).toEqual(['member']);
    // Events with a valid shape are then checked against their board, in the same answer round.
    expect(await queued()).toBe(before);
    const second = await h.api('POST', '/v1/events', {
      events: [
        ok(1),
        { ...ok(3), board: 'nope' },
        { ...ok(4), category: 'deaths' },
        { ...ok(5), value: 5000 },
        { ...ok(6), occurredAt: new Date(Date.now() + 3_600_000).toISOString() },
      ],
    });
    expect(second.status).toBe(400);
    expect(second.body.details.map((d: any) => [d.index, d.path])).toEqual([
      [1, 'board'],
      [2, 'category'],
      [3, 'value'],
      [4, 'occurredAt'],
    ]);
    expect(await queued()).toBe(before);
  });

  it('refuses empty and oversized batches, non-objects and bad JSON', async () => {
    const before = await queued();
    const cases: unknown[] = [
      { events: [] },
      { events: Array.from({ length: 1001 }, (_, i) => ok(i)) },
      [ok(1)],
      'null',
      { events: [ok(1)], extra: 1 },
    ];
    for (const body of cases) {
      const res = await h.api('POST', '/v1/events', body);
      expect(res.status).toBe(400);
      expect(res.body.details?.length ?? 0).toBeGreaterThan(0);
    }
    const bad = await h.api('POST', '/v1/events', '{"board": "game", ');
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    expect(await queued()).toBe(before);
  });

  it('refuses text Postgres cannot store, anywhere, with a 4xx and never a 500', async () => {
    const before = await queued();
    for (const metadata of [
      { note: 'a\u0000b' },
      { 'k\u0000': 1 },
      { note: '\ud800' },
      { deep: [{ x: 'ok', y: '\udc00' }] },
    ]) {
      const res = await h.api('POST', '/v1/events', JSON.stringify({ ...ok(1), metadata }));
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toMatch(/^metadata/);
    }
    expect(await queued()).toBe(before);
    expect((await h.api('GET', '/v1/boards/%00')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/%00/standings')).status).toBe(404);
    expect((await h.api('GET', '/v1/events/%00')).status).toBe(404);
    expect((await h.api('PUT', '/v1/members/x1', { displayName: 'a\u0000' })).status).toBe(400);
    expect((await h.api('PUT', '/v1/boards/nul', { aggregation: 'sum', displayName: '\ud800' })).status).toBe(400);
  });

  it('answers 413 above 1 MB', async () => {
    const res = await h.api('POST', '/v1/events', { ...ok(1), metadata: { blob: 'x'.repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  it('accepts a valid batch as one job and answers 202 with the count', async () => {
    const before = await queued();
    const res = await h.api('POST', '/v1/events', { events: [ok(1), ok(2), ok(3)] });
    expect(res).toMatchObject({ status: 202, body: { accepted: 3 } });
    expect(await queued()).toBe(before + 1);
    const status = await h.api('GET', '/v1/events/ok-2');
    expect(status.body).toMatchObject({
      idempotencyKey: 'ok-2',
      status: 'pending',
      board: 'game',
      member: 'm2',
      score: null,
    });
    expect(status.body.period).toMatch(/^\d{4}-\d{2}$/);
    expect((await h.api('GET', '/v1/events/never-posted')).status).toBe(404);
  });
});

describe('authentication and roles', () => {
  it('answers 401 without a key or with an unknown one', async () => {
    expect((await h.api('POST', '/v1/events', ok(1), null)).status).toBe(401);
    expect((await h.api('POST', '/v1/events', ok(1), 'not-a-key')).status).toBe(401);
    expect((await h.api('GET', '/v1/boards', undefined, null)).status).toBe(401);
  });

  it('enforces roles: ingest posts events, read reads, only admin defines boards and keys', async () => {
    const ingest = (await h.api('POST', '/v1/admin/keys', { name: 'game-server', role: 'ingest' })).body;
    const read = (await h.api('POST', '/v1/admin/keys', { name: 'website', role: 'read' })).body;
    expect(ingest.key).toMatch(/^lrl_/);
    const stored = await h.ctx.db.selectFrom('api_keys').selectAll().execute();
    expect(stored.some((k) => k.key_hash === ingest.key)).toBe(false);

    expect((await h.api('POST', '/v1/events', ok(9), ingest.key)).status).toBe(202);
    expect((await h.api('GET', '/v1/boards/game/standings', undefined, ingest.key)).status).toBe(403);
    expect((await h.api('GET', '/v1/boards/game/standings', undefined, read.key)).status).toBe(200);
    const forbidden = await h.api('POST', '/v1/events', ok(10), read.key);
    expect(forbidden).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect((await h.api('PUT', '/v1/boards/x', { aggregation: 'sum' }, ingest.key)).status).toBe(403);
    expect((await h.api('POST', '/v1/admin/keys', { name: 'n', role: 'admin' }, read.key)).status).toBe(403);

    expect((await h.api('DELETE', `/v1/admin/keys/${read.id}`)).status).toBe(204);
    expect((await h.api('GET', '/v1/boards', undefined, read.key)).status).toBe(401);
    expect((await h.api('DELETE', `/v1/admin/keys/${read.id}`)).status).toBe(404);
  });
});

describe('a queue Redis that is down', () => {
  it('answers 503 and accepts nothing', async () => {
    const down = await createHarness({
      workers: false,
      redisReachable: false,
      env: { REDIS_URL: 'redis://127.0.0.1:1/0' },
    });
    try {
      await down.api('PUT', '/v1/boards/game', { aggregation: 'best' });
      const res = await down.api('POST', '/v1/events', ok(1));
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('unavailable');
    } finally {
      await down.close();
    }
  });
});
