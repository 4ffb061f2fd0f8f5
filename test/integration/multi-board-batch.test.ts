import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { TEST_REDIS_CLUSTER } from '../support/databases.js';
import { prng, referenceStandings, type RefEvent } from '../support/reference.js';
import { isCluster } from '../../src/storage/redis/connections.js';
import { slotOf } from '../../src/storage/redis/slots.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T12:00:00Z');
});
afterAll(() => h.close());

const BOARDS = Array.from({ length: 8 }, (_, i) => `multi-${i}`);
const RULES = { aggregation: 'sum', order: 'desc', tieBreak: 'member' } as const;

// On a Redis Cluster the boards' periods live in different slots on different masters, so
// one batch is projected with one pipeline per slot; on one Redis, with one pipeline.
describe('one batch over many boards', () => {
  it('projects every (board, period) it touches, pending marks cleared, ranks as a reference does', async () => {
    for (const board of BOARDS)
      expect([200, 201]).toContain((await h.api('PUT', `/v1/boards/${board}`, { ...RULES, categories: ['c'] })).status);
    if (TEST_REDIS_CLUSTER) {
      const redis = h.ctx.leaderboard.redis;
      expect(isCluster(redis)).toBe(true);
      if (!isCluster(redis)) return;
      const masters = new Set(BOARDS.map((b) => redis.slots[slotOf(h.ctx.leaderboard.keys.period(b, '2026-12'))]?.[0]));
      expect(masters.size).toBeGreaterThan(1);
    }

    const rand = prng(31);
    const byBoard = new Map<string, RefEvent[]>(BOARDS.map((b) => [b, []]));
    const wire: object[] = [];
    for (let i = 0; i < 600; i += 1) {
      const board = BOARDS[Math.floor(rand() * BOARDS.length)]!;
      const event: RefEvent = {
        key: `mb-${i}`,
        member: `p${Math.floor(rand() * 30)}`,
        units: Math.floor(rand() * 50),
        atMs: Date.parse('2026-12-02T11:00:00Z') + i * 1000,
        category: rand() < 0.5 ? 'c' : undefined,
      };
      byBoard.get(board)!.push(event);
      wire.push({
        board,
        member: event.member,
        value: event.units,
        idempotencyKey: event.key,
        occurredAt: new Date(event.atMs).toISOString(),
        ...(event.category ? { category: 'c' } : {}),
      });
    }
    for (let i = 0; i < wire.length; i += 300) {
      const posted = await h.api('POST', '/v1/events?wait=true', { events: wire.slice(i, i + 300) });
      expect(posted.status).toBe(200);
      expect(posted.body.results.map((r: { status: string }) => r.status)).toEqual(Array(300).fill('applied'));
    }

    for (const board of BOARDS) {
      for (const category of [undefined, 'c']) {
        const expected = referenceStandings(byBoard.get(board)!, RULES, category);
        const page = await h.api(
          'GET',
          `/v1/boards/${board}/standings?limit=100${category ? `&category=${category}` : ''}`,
        );
        expect(page.body.source).toBe('cache');
        expect(page.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
          expected.map((e) => [e.rank, e.member, e.units]),
        );
      }
    }
    const status = await h.api('GET', '/v1/events/mb-599');
    expect(status.body.status).toBe('applied');
    expect(await h.ctx.leaderboard.redis.hlen(h.ctx.leaderboard.keys.pending())).toBe(0);
  });
});
