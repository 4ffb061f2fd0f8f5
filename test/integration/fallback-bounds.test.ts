import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createHarness, type ApiResponse, type Harness } from '../support/harness.js';
import { prng, referenceStandings, type RefEvent, wireEvent } from '../support/reference.js';

/**
 * The Postgres fallback is bounded per process (FALLBACK_MAX_CONCURRENT, then 503
 * with Retry-After in the API's error shape) and by a statement timeout, so a burst of reads of
 * a scope Redis lost leaves every other route answering.
 */

const NOW = new Date('2026-12-02T12:00:00Z');
const PERIOD = '2026-12';
const BOARD_RULES = { aggregation: 'best', order: 'asc', tieBreak: 'shared' } as const;

let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    concurrency: 2,
    env: { FALLBACK_MAX_CONCURRENT: '3', FALLBACK_STATEMENT_TIMEOUT_MS: '1000' },
  });
  h.clock.set(NOW);
});
afterAll(() => h.close());

const wire = (board: string, e: RefEvent) => wireEvent(board, e);

async function seed(board: string, n: number, seedNo: number): Promise<RefEvent[]> {
  expect(
    (
      await h.api('PUT', `/v1/boards/${board}`, {
        aggregation: BOARD_RULES.aggregation,
        order: BOARD_RULES.order,
        tieBreak: BOARD_RULES.tieBreak,
      })
    ).status,
  ).toBe(201);
  const rand = prng(seedNo);
  const events: RefEvent[] = Array.from({ length: n }, (_, i) => ({
    key: `${board}-${i}`,
    member: `${board}-m${i}`,
    units: Math.floor(rand() * 30),
    atMs: NOW.getTime() - 60_000,
  }));
  await h.postEvents(events.map((e) => wire(board, e)));
  return events;
}

/** A refusal of the fallback's bound or timeout: 503, Retry-After, and exactly the API's error fields. */
function expectRefused(res: ApiResponse): void {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
  expect(res.body.error).toBe('unavailable');
  expect(res.body.message).toMatch(/retry shortly/);
}

describe('the Postgres fallback under a burst', () => {
  it('answers a thousand concurrent reads right or 503 with Retry-After, while health, intake and cached reads go on', async () => {
    const lost = referenceStandings(await seed('fb-lost', 200, 3), BOARD_RULES);
    const kept = referenceStandings(await seed('fb-kept', 50, 4), BOARD_RULES);
    await h.drain();
    // The lost board's scope is no longer complete in Redis; its rebuild is held back.
    await h.ctx.rebuildQueue.pause();
    try {
      await h.ctx.leaderboard.redis.del(h.ctx.leaderboard.keys.ok('fb-lost', PERIOD));
      const reads = Array.from({ length: 1000 }, (_, i) => {
        const who = lost[i % lost.length]!;
        const path =
          i % 3 === 0
            ? `/v1/boards/fb-lost/standings?limit=10&offset=${i % 190}`
            : i % 3 === 1
              ? `/v1/boards/fb-lost/standings/${who.member}`
              : `/v1/boards/fb-lost/standings/${who.member}/around?radius=2`;
        return { i, who, path, answer: h.api('GET', path) };
      });
      // Sent while the burst is in flight.
      const others = await Promise.all([
        h.api('GET', '/healthz'),
        h.api('GET', '/readyz'),
        h.api('GET', '/v1/boards/fb-kept/standings?limit=5'),
        h.api('GET', `/v1/boards/fb-kept/standings/${kept[7]!.member}`),
        h.api('POST', '/v1/events', {
          events: [wire('fb-kept', { key: 'fb-during', member: 'fb-kept-m0', units: 29, atMs: NOW.getTime() - 1000 })],
        }),
        h.api('GET', '/v1/boards/fb-lost'),
      ]);
      expect(others.map((r) => r.status)).toEqual([200, 200, 200, 200, 202, 200]);
      expect(others[2].body).toMatchObject({ source: 'cache', total: kept.length });
      expect(others[2].body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
        kept.slice(0, 5).map((e) => [e.rank, e.member, e.units]),
      );
      expect(others[3].body).toMatchObject({ source: 'cache', rank: kept[7]!.rank, score: kept[7]!.units });

      let answered = 0;
      let refused = 0;
      for (const { i, who, path } of reads) {
        const res = await reads[i]!.answer;
        if (res.status === 503) {
          expectRefused(res);
          refused += 1;
          continue;
        }
        answered += 1;
        expect(res.status, path).toBe(200);
        expect(res.body.source, path).toBe('database');
        if (i % 3 === 0) {
          const offset = i % 190;
          expect(
            res.body.entries.map((e: any) => [e.rank, e.member, e.score]),
            path,
          ).toEqual(lost.slice(offset, offset + 10).map((e) => [e.rank, e.member, e.units]));
        } else if (i % 3 === 1) {
          expect(res.body, path).toMatchObject({ total: lost.length, rank: who.rank, score: who.units });
        } else {
          const at = lost.indexOf(who);
          expect(
            res.body.entries.map((e: any) => [e.rank, e.member]),
            path,
          ).toEqual(lost.slice(Math.max(0, at - 2), at + 3).map((e) => [e.rank, e.member]));
        }
      }
      expect(answered).toBeGreaterThanOrEqual(3);
      // A thousand at once against a bound of three: most are refused, none waits in a queue.
      expect(refused).toBeGreaterThan(0);
      expect(h.ctx.fallback.inFlight).toBe(0);
    } finally {
      await h.ctx.rebuildQueue.resume();
    }
    await h.drain();
    const after = await h.api('GET', `/v1/boards/fb-lost/standings/${lost[5]!.member}`);
    expect(after.body).toMatchObject({ source: 'cache', rank: lost[5]!.rank });
  });

  it('cancels a fallback read that runs past the statement timeout and answers 503 with Retry-After', async () => {
    const lost = referenceStandings(await seed('fb-slow', 20, 5), BOARD_RULES);
    await h.drain();
    await h.ctx.rebuildQueue.pause();
    try {
      await h.ctx.leaderboard.redis.del(h.ctx.leaderboard.keys.ok('fb-slow', PERIOD));
      // The aggregates locked by another session: the fallback read waits on the lock until
      // its statement timeout (1 s here) cancels it.
      const read = await h.ctx.db.transaction().execute(async (trx) => {
        await sql`LOCK TABLE member_aggregates IN ACCESS EXCLUSIVE MODE`.execute(trx);
        return h.api('GET', `/v1/boards/fb-slow/standings/${lost[0]!.member}`);
      });
      expectRefused(read);
      expect((await h.api('GET', '/healthz')).status).toBe(200);
      const again = await h.api('GET', `/v1/boards/fb-slow/standings/${lost[0]!.member}`);
      expect(again.body).toMatchObject({ source: 'database', rank: lost[0]!.rank, total: lost.length });
    } finally {
      await h.ctx.rebuildQueue.resume();
    }
  });
});
