import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { closePeriod } from '../../src/services/period-closing.js';
import {
  prng,
  referenceStandings,
  shuffle,
  type RefEvent,
  type RefStanding,
  type TieBreak,
} from '../support/reference.js';

/** Picked members' entries (`members`), `me` beside a page (`member`). */

const NOW = new Date('2026-12-02T12:00:00Z');

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ concurrency: 2 });
  h.clock.set(NOW);
});
afterAll(() => h.close());

/** Few distinct values and seconds, so every tie rule has ties to break. */
function generate(board: string, members: number, seed: number): RefEvent[] {
  const rand = prng(seed);
  const events: RefEvent[] = [];
  for (let i = 0; i < members; i += 1) {
    for (let k = 0; k < (rand() < 0.2 ? 2 : 1); k += 1) {
      events.push({
        key: `${board}-${i}-${k}`,
        member: `m${String(i).padStart(4, '0')}`,
        units: Math.floor(rand() * 40),
        atMs: NOW.getTime() - 3_600_000 + Math.floor(rand() * 20) * 1000,
      });
    }
  }
  return events;
}

async function load(board: string, tieBreak: TieBreak, events: RefEvent[]): Promise<void> {
  expect((await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', tieBreak, period: 'month' })).status).toBe(
    201,
  );
  const wire = shuffle(events, prng(7)).map((e) => ({
    board,
    member: e.member,
    value: e.units,
    idempotencyKey: e.key,
    occurredAt: new Date(e.atMs).toISOString(),
  }));
  expect((await h.api('POST', '/v1/events', { events: wire })).status).toBe(202);
  await h.drain();
}

const entry = (s: RefStanding) => ({ rank: s.rank, member: s.member, displayName: null, score: s.units });

function meOf(expected: RefStanding[], member: string) {
  const s = expected.find((e) => e.member === member);
  if (!s) return { member, rank: null, score: null, percentile: null, topPercent: null };
  const percentile = s.rank / expected.length;
  return { member, rank: s.rank, score: s.units, percentile, topPercent: Math.max(1, Math.round(percentile * 100)) };
}

/** Every form of the two options, compared with the reference; `source` is where the answers must come from. */
async function checkPicks(
  board: string,
  expected: RefStanding[],
  source: 'cache' | 'database',
  seed: number,
): Promise<void> {
  const rand = prng(seed);
  const base = `/v1/boards/${board}/standings`;
  const total = expected.length;
  // Ids spread over the whole ranking, ties included, plus ids with no score and a repeat.
  const picked = [
    ...shuffle(expected, rand)
      .slice(0, 97)
      .map((s) => s.member),
    'ghost-1',
    'ghost-2',
    expected[5]!.member,
  ];
  const pickedSet = new Set(picked);
  const res = await h.api('GET', `${base}?members=${picked.join(',')}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ source, total });
  expect(res.body.entries).toEqual(expected.filter((s) => pickedSet.has(s.member)).map(entry));
  expect(res.body.me).toBeUndefined();

  // `me` with the picked members: the member's scope placement, whether picked or not.
  const me = expected[Math.floor(total * 0.7)]!.member;
  const withMe = await h.api('GET', `${base}?members=${expected[0]!.member},ghost-1&member=${me}`);
  expect(withMe.body.entries).toEqual([entry(expected[0]!)]);
  expect(withMe.body.me).toEqual(meOf(expected, me));

  // `me` beside a page, at the top and deep in the ranking.
  for (const [offset, limit] of [
    [0, 10],
    [total - 20, 50],
  ] as const) {
    const page = await h.api('GET', `${base}?offset=${offset}&limit=${limit}&member=${me}`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ source, total, offset, limit });
    expect(page.body.entries).toEqual(expected.slice(offset, offset + limit).map(entry));
    expect(page.body.me).toEqual(meOf(expected, me));
  }
  const nobody = await h.api('GET', `${base}?limit=3&member=ghost-3`);
  expect(nobody.body.me).toEqual(meOf(expected, 'ghost-3'));
  expect(nobody.body.me.rank).toBeNull();

  // Only unknown ids: no entries, the scope's total still.
  const none = await h.api('GET', `${base}?members=ghost-1,ghost-2`);
  expect(none.body).toMatchObject({ total, entries: [] });
}

describe('standings of picked members and `me`', () => {
  for (const tieBreak of ['shared', 'first'] as const) {
    it(`ranks them in the scope as an independent sort does (${tieBreak}), from the cache, the database fallback and final results`, async () => {
      const board = `picks-${tieBreak}`;
      const events = generate(board, 400, tieBreak.length);
      await load(board, tieBreak, events);
      const expected = referenceStandings(events, { aggregation: 'sum', order: 'desc', tieBreak });
      await checkPicks(board, expected, 'cache', 1);

      // Redis without the scope (rebuilds held back): the same answers from Postgres.
      await h.ctx.rebuildQueue.pause();
      try {
        await h.ctx.leaderboard.redis.del(h.ctx.leaderboard.keys.ok(board, '2026-12'));
        await checkPicks(board, expected, 'database', 2);
      } finally {
        await h.ctx.rebuildQueue.resume();
      }
      await h.drain();
      await checkPicks(board, expected, 'cache', 3);
    });
  }

  it('answers a retired period from its final results, the same', async () => {
    const board = 'picks-shared';
    const expected = referenceStandings(generate(board, 400, 'shared'.length), {
      aggregation: 'sum',
      order: 'desc',
      tieBreak: 'shared',
    });
    h.clock.set('2027-01-01T00:06:00Z');
    expect(await closePeriod(h.ctx, (await h.ctx.boards.get(board))!, '2026-12')).toBe(true);
    h.clock.set(new Date(Date.parse('2027-01-01T00:06:00Z') + (h.env.CLOSED_PERIOD_CACHE_HOURS + 1) * 3_600_000));
    const base = `/v1/boards/${board}/standings?period=2026-12`;
    const picked = [expected[3]!.member, expected[399]!.member, expected[200]!.member, 'ghost'];
    const res = await h.api('GET', `${base}&members=${picked.join(',')}&member=${expected[10]!.member}`);
    expect(res.body).toMatchObject({ source: 'database', total: 400, period: { state: 'closed' } });
    expect(res.body.entries).toEqual([expected[3]!, expected[200]!, expected[399]!].map(entry));
    expect(res.body.me).toEqual(meOf(expected, expected[10]!.member));
    const page = await h.api('GET', `${base}&offset=390&member=ghost`);
    expect(page.body.entries).toEqual(expected.slice(390).map(entry));
    expect(page.body.me).toEqual(meOf(expected, 'ghost'));
    h.clock.set(NOW);
  });

  it('refuses bad ids with a 400 naming the field', async () => {
    const base = '/v1/boards/picks-first/standings';
    const tooMany = Array.from({ length: 101 }, (_, i) => `x${i}`).join(',');
    for (const [query, path] of [
      ['members=', 'members.0'],
      ['members=a,,b', 'members.1'],
      ['members=a,b%20c', 'members.1'],
      [`members=${tooMany}`, 'members'],
      ['members=a&members=b', 'members'],
      ['member=no%20space', 'member'],
    ] as const) {
      const res = await h.api('GET', `${base}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const hundred = Array.from({ length: 100 }, (_, i) => `x${i}`).join(',');
    expect((await h.api('GET', `${base}?members=${hundred}`)).status).toBe(200);
  });
});

describe('?wait=true with the placement before the batch', () => {
  it('gives previousRank and previousScore as an independent model does, batch after batch', async () => {
    const board = 'before-after';
    const created = await h.api('PUT', `/v1/boards/${board}`, {
      aggregation: 'best',
      tieBreak: 'first',
      period: 'month',
      decimals: 1,
    });
    expect(created.status).toBe(201);
    const rand = prng(11);
    const applied: RefEvent[] = [];
    const spec = { aggregation: 'best', order: 'desc', tieBreak: 'first' } as const;
    const placing = (standings: RefStanding[], member: string) => {
      const s = standings.find((x) => x.member === member);
      return s ? { rank: s.rank, score: s.units / 10 } : { rank: null, score: null };
    };
    for (let batch = 0; batch < 6; batch += 1) {
      const events: RefEvent[] = Array.from({ length: 25 }, (_, i) => ({
        key: `ba-${batch}-${i}`,
        member: `b${Math.floor(rand() * 15)}`,
        units: Math.floor(rand() * 300),
        atMs: NOW.getTime() - 600_000 + Math.floor(rand() * 300) * 1000,
      }));
      // A key of an earlier batch, posted again: a duplicate, with its member's placements too.
      const again = batch > 0 ? [applied[Math.floor(rand() * applied.length)]!] : [];
      const beforeBatch = referenceStandings(applied, spec);
      const afterBatch = referenceStandings([...applied, ...events], spec);
      const wire = [...events, ...again].map((e) => ({
        board,
        member: e.member,
        value: e.units / 10,
        idempotencyKey: e.key,
        occurredAt: new Date(e.atMs).toISOString(),
      }));
      // Batch 3 with Redis lacking the period (rebuilds held back): both placements from Postgres.
      if (batch === 3) {
        await h.ctx.rebuildQueue.pause();
        await h.ctx.leaderboard.redis.del(h.ctx.leaderboard.keys.ok(board, '2026-12'));
      }
      const res = await h.api('POST', '/v1/events?wait=true', { events: wire });
      if (batch === 3) {
        expect((await h.api('GET', `/v1/boards/${board}/standings?limit=1`)).body.source).toBe('database');
        await h.ctx.rebuildQueue.resume();
        await h.drain();
      }
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual(
        [...events, ...again].map((e, i) => {
          const now = placing(afterBatch, e.member);
          const previous = placing(beforeBatch, e.member);
          return {
            idempotencyKey: e.key,
            board,
            status: i < events.length ? 'applied' : 'duplicate',
            period: '2026-12',
            score: now.score,
            rank: now.rank,
            previousScore: previous.score,
            previousRank: previous.rank,
          };
        }),
      );
      applied.push(...events);
    }
  });
});

describe("a member's events", () => {
  it('lists applied, voided and rejected events newest first, paged by a cursor that inserts do not shift', async () => {
    expect((await h.api('PUT', '/v1/boards/hist-a', { aggregation: 'sum', period: 'month', decimals: 1 })).status).toBe(
      201,
    );
    expect(
      (await h.api('PUT', '/v1/boards/hist-b', { aggregation: 'best', period: 'day', graceSeconds: 0 })).status,
    ).toBe(201);
    const rand = prng(21);
    interface Posted {
      board: string;
      key: string;
      value: number;
      at: string;
      source?: string;
      metadata?: unknown;
    }
    const mine: Posted[] = [];
    const wire = (member: string, p: Posted) => ({
      board: p.board,
      member,
      value: p.value,
      idempotencyKey: p.key,
      occurredAt: p.at,
      source: p.source,
      metadata: p.metadata,
    });
    for (let i = 0; i < 40; i += 1) {
      // Whole seconds, many shared, so the key breaks ties in the order.
      const at = new Date(NOW.getTime() - 7_200_000 + Math.floor(rand() * 30) * 1000).toISOString();
      const board = rand() < 0.5 ? 'hist-a' : 'hist-b';
      mine.push({
        board,
        key: `h-${String(Math.floor(rand() * 1e6)).padStart(6, '0')}-${i}`,
        value: board === 'hist-a' ? Math.floor(rand() * 100) / 10 : Math.floor(rand() * 100),
        at,
        source: i % 3 === 0 ? 'match-server' : undefined,
        metadata: i % 4 === 0 ? { match: i } : undefined,
      });
    }
    const others = Array.from({ length: 10 }, (_, i) =>
      wire('someone-else', { board: 'hist-a', key: `o-${i}`, value: 1, at: NOW.toISOString() }),
    );
    expect(
      (await h.api('POST', '/v1/events?wait=true', { events: [...mine.map((p) => wire('hist', p)), ...others] }))
        .status,
    ).toBe(200);
    // A conflict (same key and time, another value), a closed day, a void.
    const conflict = { ...mine[3]!, value: mine[3]!.board === 'hist-a' ? 99.9 : 999 };
    const late: Posted = { board: 'hist-b', key: 'h-late', value: 5, at: '2026-11-20T10:00:00.000Z' };
    const rejected = await h.api('POST', '/v1/events?wait=true', {
      events: [wire('hist', conflict), wire('hist', late)],
    });
    expect(rejected.body.results.map((r: any) => r.reason)).toEqual(['conflict', 'period_closed']);
    const voided = mine[7]!;
    expect((await h.api('POST', `/v1/events/${voided.key}/void`, { reason: 'cheated' })).status).toBe(200);

    const row = (p: Posted, status: string, reason: string | null) => ({
      idempotencyKey: p.key,
      board: p.board,
      period:
        status === 'rejected' && reason === 'period_closed'
          ? '2026-11-20'
          : p.board === 'hist-a'
            ? '2026-12'
            : '2026-12-02',
      status,
      reason,
      value: p.value,
      occurredAt: p.at,
      receivedAt: NOW.toISOString(),
      source: p.source ?? null,
      metadata: p.metadata ?? null,
      kind: status === 'rejected' ? 1 : 0,
    });
    const all = [
      ...mine.map((p) => (p === voided ? row(p, 'voided', 'cheated') : row(p, 'applied', null))),
      row(conflict, 'rejected', 'conflict'),
      row(late, 'rejected', 'period_closed'),
    ];
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    all.sort(
      (x, y) => bytes(y.occurredAt, x.occurredAt) || bytes(y.idempotencyKey, x.idempotencyKey) || y.kind - x.kind,
    );
    const expected = all.map(({ kind: _kind, ...rest }) => rest);

    const pages: any[] = [];
    let cursor: string | null = null;
    let first = true;
    do {
      const res: { status: number; body: any } = await h.api(
        'GET',
        `/v1/members/hist/events?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.member).toBe('hist');
      pages.push(...res.body.events);
      cursor = res.body.nextCursor;
      if (first) {
        // Newer events arriving between pages do not shift the pages still to come.
        const newer = Array.from({ length: 5 }, (_, i) =>
          wire('hist', { board: 'hist-a', key: `h-new-${i}`, value: 1, at: NOW.toISOString() }),
        );
        expect((await h.api('POST', '/v1/events?wait=true', { events: newer })).status).toBe(200);
        first = false;
      }
    } while (cursor !== null);
    expect(pages).toEqual(expected);

    // Filters, and the newer events first now.
    const onB = await h.api('GET', '/v1/members/hist/events?board=hist-b&period=2026-12-02&limit=200');
    expect(onB.body.events).toEqual(expected.filter((e) => e.board === 'hist-b' && e.period === '2026-12-02'));
    expect(onB.body.nextCursor).toBeNull();
    const latest = await h.api('GET', '/v1/members/hist/events?limit=5');
    expect(latest.body.events.map((e: any) => e.idempotencyKey)).toEqual([
      'h-new-4',
      'h-new-3',
      'h-new-2',
      'h-new-1',
      'h-new-0',
    ]);
    expect((await h.api('GET', '/v1/members/nobody/events')).body).toEqual({
      member: 'nobody',
      events: [],
      nextCursor: null,
    });

    for (const [query, path] of [
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['board=Bad!', 'board'],
    ] as const) {
      const res = await h.api('GET', `/v1/members/hist/events?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await h.api('GET', '/v1/members/hist/events?board=no-such-board')).status).toBe(404);
  });
});
