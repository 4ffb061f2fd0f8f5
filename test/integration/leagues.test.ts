import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { postAndWait } from '../support/wait-results.js';
import { runTick } from '../../src/services/period-tick.js';
import { until } from '../support/poll.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-05T12:00:00Z');
});
afterAll(() => h.close());

const league = { tiers: ['bronze', 'silver', 'gold'], bucketSize: 2, promote: 1, relegate: 1 };
const ev = (key: string, member: string, value: number, occurredAt: string) => ({
  board: 'ladder',
  member,
  value,
  idempotencyKey: key,
  occurredAt,
});
type Entry = { rank: number; member: string; score: number; zone: string | null };
const rows = (body: { entries: Entry[] }) => body.entries.map((e) => [e.rank, e.member, e.score, e.zone]);

describe('leagues', () => {
  it('refuses a league the board cannot run, naming the field, and fixes it once the board has events', async () => {
    const cases: Array<[object, string]> = [
      [{ aggregation: 'sum', period: 'all', league }, 'league'],
      [{ aggregation: 'sum', league: { ...league, tiers: ['only'] } }, 'league.tiers'],
      [{ aggregation: 'sum', league: { ...league, bucketSize: 1 } }, 'league.bucketSize'],
      [{ aggregation: 'sum', league: { ...league, promote: -1 } }, 'league.promote'],
      [{ aggregation: 'sum', league: { ...league, startTier: 'platinum' } }, 'league.startTier'],
    ];
    for (const [definition, path] of cases) {
      const res = await h.api('PUT', '/v1/boards/bad-league', definition);
      expect(res.status, path).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual([path]);
    }
    const created = await h.api('PUT', '/v1/boards/ladder', { aggregation: 'sum', period: 'day', league });
    expect(created.body.league).toEqual({ ...league, startTier: 'bronze' });
    await postAndWait(h, [ev('l-a1', 'ann', 50, '2026-12-05T10:00:00Z')]);
    const changed = await h.api('PUT', '/v1/boards/ladder', {
      aggregation: 'sum',
      period: 'day',
      league: { ...league, promote: 2 },
    });
    expect(changed.status).toBe(409);
    expect(changed.body.details).toEqual([{ path: 'league', message: 'fixed once the board has events' }]);
  });

  it('places members in buckets by their first events, ranks each bucket and marks the zones', async () => {
    // Batch order is not placement order: first events by (occurredAt, key) decide.
    await postAndWait(h, [
      ev('l-e1', 'eve', 10, '2026-12-05T10:30:00Z'),
      ev('l-b1', 'bob', 20, '2026-12-05T10:05:00Z'),
      ev('l-d1', 'dan', 40, '2026-12-05T10:20:00Z'),
      ev('l-c1', 'cat', 30, '2026-12-05T10:10:00Z'),
      ev('l-b2', 'bob', 70, '2026-12-05T11:00:00Z'),
    ]);
    const bronze1 = (await h.api('GET', '/v1/boards/ladder/league/bronze-1')).body;
    expect(bronze1).toMatchObject({
      tier: 'bronze',
      bucket: 'bronze-1',
      rank: null,
      total: 2,
      promote: 1,
      relegate: 1,
    });
    // Lowest tier: nobody is relegated from it.
    expect(rows(bronze1)).toEqual([
      [1, 'bob', 90, 'promote'],
      [2, 'ann', 50, null],
    ]);
    const cat = (await h.api('GET', '/v1/boards/ladder/standings/cat/league')).body;
    expect(cat).toMatchObject({ tier: 'bronze', bucket: 'bronze-2', rank: 2, total: 2 });
    expect(rows(cat)).toEqual([
      [1, 'dan', 40, 'promote'],
      [2, 'cat', 30, null],
    ]);
    expect(rows((await h.api('GET', '/v1/boards/ladder/league/bronze-3')).body)).toEqual([[1, 'eve', 10, 'promote']]);
    expect((await h.api('GET', '/v1/boards/ladder/standings/zoe/league')).body).toMatchObject({
      tier: 'bronze',
      bucket: null,
      rank: null,
      total: 0,
      entries: [],
    });
    expect((await h.api('GET', '/v1/boards/ladder/league/platinum-1')).status).toBe(404);
  });

  it('promotes at close exactly once, awards and reports it, and places those who played on while the close was pending', async () => {
    // Past midnight but inside the grace: the 5th is not closed, so day 6 placements wait.
    h.clock.set('2026-12-06T00:02:00Z');
    await postAndWait(h, [ev('l-b6', 'bob', 5, '2026-12-06T00:01:00Z'), ev('l-f6', 'fay', 6, '2026-12-06T00:00:30Z')]);
    expect((await h.api('GET', '/v1/boards/ladder/standings/bob/league')).body).toMatchObject({
      bucket: null,
      rank: null,
      tier: 'bronze',
    });
    h.clock.set('2026-12-06T00:06:00Z');
    await runTick(h.ctx);
    await runTick(h.ctx);
    const awards = await h.ctx.db
      .selectFrom('awards')
      .select(['member_id', 'award'])
      .where('board_id', '=', 'ladder')
      .where('award', 'like', 'league%')
      .orderBy('member_id')
      .orderBy('award')
      .execute();
    expect(awards.map((a) => `${a.member_id}:${a.award}`)).toEqual([
      'bob:league_promoted',
      'bob:league_top1',
      'dan:league_promoted',
      'dan:league_top1',
      'eve:league_promoted',
      'eve:league_top1',
    ]);
    const report = async (member: string) =>
      (await h.api('GET', `/v1/members/${member}/notifications`)).body.notifications[0].body;
    expect(await report('bob')).toBe('You finished 1st in bronze-1; next tier: silver');
    // Third in the world, first of bronze-2: the report names the bucket place, as the awards do.
    expect(await report('dan')).toBe('You finished 1st in bronze-2; next tier: silver');
    expect(await report('cat')).toBe('You finished 2nd in bronze-2; next tier: bronze');
    expect((await h.api('GET', '/v1/members/bob/leagues')).body).toEqual({
      member: 'bob',
      leagues: [{ board: 'ladder', tier: 'silver' }],
    });
    expect((await h.api('GET', '/v1/members/zoe/leagues')).body).toEqual({
      member: 'zoe',
      leagues: [{ board: 'ladder', tier: 'bronze' }],
    });
    // Placed at the close, in their new tiers.
    expect((await h.api('GET', '/v1/boards/ladder/standings/bob/league')).body).toMatchObject({
      tier: 'silver',
      bucket: 'silver-1',
      rank: 1,
    });
    expect((await h.api('GET', '/v1/boards/ladder/standings/fay/league')).body).toMatchObject({
      tier: 'bronze',
      bucket: 'bronze-1',
      rank: 1,
    });
    // A member who skipped the 6th keeps the tier earned on the 5th; placement is now immediate.
    await postAndWait(h, [ev('l-d6', 'dan', 1, '2026-12-06T00:05:00Z'), ev('l-a6', 'ann', 1, '2026-12-06T00:05:00Z')]);
    expect((await h.api('GET', '/v1/boards/ladder/standings/dan/league')).body).toMatchObject({
      tier: 'silver',
      bucket: 'silver-1',
    });
    expect((await h.api('GET', '/v1/boards/ladder/standings/ann/league')).body).toMatchObject({
      tier: 'bronze',
      bucket: 'bronze-1',
    });
    const fifth = (await h.api('GET', '/v1/boards/ladder/league/bronze-1?period=2026-12-05')).body;
    expect(fifth.period.state).toBe('closed');
    expect(rows(fifth)).toEqual([
      [1, 'bob', 90, 'promote'],
      [2, 'ann', 50, null],
    ]);
  });

  it("on erasure drops the member's tier and keeps their slots under the pseudonym, so buckets do not shift", async () => {
    const { erasureId } = (await h.api('DELETE', '/v1/members/bob')).body;
    await until('erasure done', async () =>
      (await h.api('GET', `/v1/admin/erasures/${erasureId}`)).body.state === 'done' ? true : undefined,
    );
    await h.drain();
    const rows = await h.ctx.db
      .selectFrom('league_placements')
      .select(['member_id', 'period_key', 'bucket'])
      .where('board_id', '=', 'ladder')
      .where('bucket', 'in', ['bronze-1', 'silver-1'])
      .orderBy('period_key')
      .orderBy('slot')
      .execute();
    expect(rows.some((r) => r.member_id === 'bob')).toBe(false);
    expect(rows.filter((r) => r.member_id.startsWith('erased:')).map((r) => `${r.period_key} ${r.bucket}`)).toEqual([
      '2026-12-05 bronze-1',
      '2026-12-06 silver-1',
    ]);
    expect(await h.ctx.db.selectFrom('league_tiers').select('tier').where('member_id', '=', 'bob').execute()).toEqual(
      [],
    );
    expect((await h.api('GET', '/v1/members/bob/leagues')).body.leagues).toEqual([{ board: 'ladder', tier: 'bronze' }]);
    expect((await h.api('GET', '/v1/boards/ladder/standings/dan/league')).body).toMatchObject({
      bucket: 'silver-1',
      rank: 1,
      total: 1,
    });
  });

  it('lets the next tick place the members a close left waiting when the process died right after it', async () => {
    // As if the close committed and the process died before placing ann (she played during the grace).
    await h.ctx.db
      .deleteFrom('league_placements')
      .where('board_id', '=', 'ladder')
      .where('period_key', '=', '2026-12-06')
      .where('member_id', '=', 'ann')
      .execute();
    await h.ctx.db
      .updateTable('periods')
      .set({ league_waiting: true })
      .where('board_id', '=', 'ladder')
      .where('key', '=', '2026-12-05')
      .execute();
    expect((await h.api('GET', '/v1/boards/ladder/standings/ann/league')).body).toMatchObject({ bucket: null });
    await runTick(h.ctx);
    expect((await h.api('GET', '/v1/boards/ladder/standings/ann/league')).body).toMatchObject({
      tier: 'bronze',
      bucket: 'bronze-1',
    });
    const flag = await h.ctx.db
      .selectFrom('periods')
      .select('league_waiting')
      .where('board_id', '=', 'ladder')
      .where('key', '=', '2026-12-05')
      .executeTakeFirstOrThrow();
    expect(flag.league_waiting).toBe(false);
  });
});
