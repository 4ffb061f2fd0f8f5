import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createHarness, type Harness } from '../support/harness.js';
import { memberState } from '../support/member-state.js';
import { processScoreJob } from '../../src/services/score-application.js';
import { payloadHash } from '../../src/domain/event.js';
import type { ScoreJob } from '../../src/queue/score-events-queue.js';
import type { ScoreEventInput } from '../../src/domain/event.js';

let h: Harness;
beforeAll(async () => {
  // Jobs are driven by hand here, so that a crash or a race can be placed exactly.
  h = await createHarness({ workers: false });
  for (const [id, aggregation] of [
    ['sums', 'sum'],
    ['bests', 'best'],
    ['lasts', 'last'],
  ] as const) {
    expect((await h.api('PUT', `/v1/boards/${id}`, { aggregation, period: 'all' })).status).toBe(201);
  }
});
afterAll(() => h.close());

function job(events: ScoreEventInput[], receivedAt = new Date()): ScoreJob {
  return {
    events: events.map((posted) => ({
      posted,
      receivedAt: receivedAt.toISOString(),
      payloadHash: payloadHash(posted),
    })),
  };
}

async function aggregateRow(board: string, member: string) {
  return h.ctx.db
    .selectFrom('member_aggregates')
    .selectAll()
    .where('board_id', '=', board)
    .where('member_id', '=', member)
    .where('category', '=', 'all')
    .executeTakeFirst();
}

async function cached(board: string, member: string) {
  return (await h.api('GET', `/v1/boards/${board}/standings/${member}?period=all`)).body;
}

async function ledgerCount(key: string) {
  const row = await h.ctx.db
    .selectFrom('score_events')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('idempotency_key', '=', key)
    .executeTakeFirstOrThrow();
  return row.n;
}

describe('idempotency', () => {
  it('applies a key posted three times once, and answers duplicate after the first', async () => {
    const event = { board: 'sums', member: 'idem', value: 5, idempotencyKey: 'idem-1' };
    const statuses: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await h.api('POST', '/v1/events', event);
      expect(res.status).toBe(202);
      const [queued] = await h.ctx.scoreQueue.getJobs(['waiting']);
      const out = await processScoreJob(h.ctx, { events: queued!.data.events, wantResults: true });
      await queued!.remove();
      statuses.push(out.results![0]!.status);
    }
    expect(statuses).toEqual(['applied', 'duplicate', 'duplicate']);
    expect(await ledgerCount('idem-1')).toBe(1);
    expect((await aggregateRow('sums', 'idem'))!.value).toBe(5);
    expect(await cached('sums', 'idem')).toMatchObject({ score: 5, rank: expect.any(Number) });
  });

  it('rejects the same key with another payload as a conflict and keeps the first', async () => {
    await processScoreJob(h.ctx, job([{ board: 'sums', member: 'conf', value: 1, idempotencyKey: 'conf-1' }]));
    const out = await processScoreJob(h.ctx, {
      ...job([{ board: 'sums', member: 'conf', value: 100, idempotencyKey: 'conf-1' }]),
      wantResults: true,
    });
    expect(out.results![0]).toMatchObject({ status: 'rejected', reason: 'conflict' });
    expect((await aggregateRow('sums', 'conf'))!.value).toBe(1);
    const status = await h.api('GET', '/v1/events/conf-1');
    expect(status.body).toMatchObject({ status: 'applied', value: 1 });
    const rejections = await h.ctx.db
      .selectFrom('rejections')
      .selectAll()
      .where('idempotency_key', '=', 'conf-1')
      .execute();
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toMatchObject({ reason: 'conflict', payload: { value: 100 } });
  });

  it('treats a key repeated inside one batch as one event', async () => {
    const e = { board: 'sums', member: 'twice', value: 3, idempotencyKey: 'twice-1' };
    const out = await processScoreJob(h.ctx, { ...job([e, e, { ...e, value: 4 }]), wantResults: true });
    expect(out.results!.map((r) => r.status)).toEqual(['applied', 'duplicate', 'rejected']);
    expect((await aggregateRow('sums', 'twice'))!.value).toBe(3);
  });
});

describe('keys repeated inside a batch', () => {
  it('share the fate of their first copy on their board; the same key on another board is another event', async () => {
    await processScoreJob(h.ctx, job([{ board: 'bests', member: 'rep', value: 1, idempotencyKey: 'rep-1' }]));
    // The same key for another board, twice, then once more with another payload.
    const other = { board: 'sums', member: 'rep', value: 9, idempotencyKey: 'rep-1' };
    const changed = { ...other, value: 8 };
    const fresh = { board: 'sums', member: 'rep', value: 2, idempotencyKey: 'rep-2' };
    const out = await processScoreJob(h.ctx, { ...job([other, other, changed, fresh]), wantResults: true });
    // Results name no event (the queue keeps them for hours): they are in the job's order.
    expect(out.results!.map((r) => [r.status, r.reason])).toEqual([
      ['applied', undefined],
      ['duplicate', undefined],
      ['rejected', 'conflict'],
      ['applied', undefined],
    ]);
    expect(await cached('sums', 'rep')).toMatchObject({ score: 11 });
    expect(await cached('bests', 'rep')).toMatchObject({ score: 1 });
  });

  it('a repeat of a refused event is refused for the same reason, and creates no period', async () => {
    await h.api('PUT', '/v1/boards/daily', { aggregation: 'sum', period: 'day', graceSeconds: 0 });
    const late = {
      board: 'daily',
      member: 'rep',
      value: 1,
      idempotencyKey: 'rep-late',
      occurredAt: '2025-01-01T10:00:00Z',
    };
    const out = await processScoreJob(h.ctx, { ...job([late, late]), wantResults: true });
    expect(out.results!.map((r) => r.reason)).toEqual(['period_closed', 'period_closed']);
    const periods = await h.ctx.db.selectFrom('periods').selectAll().where('board_id', '=', 'daily').execute();
    expect(periods).toEqual([]);
  });
});

describe('crash safety', () => {
  it('processing the same job twice changes nothing the second time', async () => {
    const j = job([
      { board: 'sums', member: 'rerun', value: 2, idempotencyKey: 'rerun-1' },
      { board: 'sums', member: 'rerun', value: 3, idempotencyKey: 'rerun-2' },
    ]);
    await processScoreJob(h.ctx, j);
    const first = await aggregateRow('sums', 'rerun');
    await processScoreJob(h.ctx, j);
    const second = await aggregateRow('sums', 'rerun');
    expect(first!.value).toBe(5);
    expect(second!.value).toBe(5);
    expect(second!.version).toBe(first!.version);
    expect(await cached('sums', 'rerun')).toMatchObject({ score: 5 });
  });

  it('a crash after the Postgres commit and before the Redis write is repaired by the retry', async () => {
    // A board of its own: its period is created by this very batch.
    await h.api('PUT', '/v1/boards/crashes', { aggregation: 'best', period: 'all' });
    const j = job([{ board: 'crashes', member: 'crash', value: 42, idempotencyKey: 'crash-1' }]);
    h.faults.afterCommit = () => {
      throw new Error('injected crash after commit');
    };
    await expect(processScoreJob(h.ctx, j)).rejects.toThrow('injected crash');
    h.faults.afterCommit = undefined;
    // Committed in Postgres, not yet in Redis: a read is answered from Postgres meanwhile.
    expect((await aggregateRow('crashes', 'crash'))!.value).toBe(42);
    const projected = () =>
      memberState(h.ctx.leaderboard.redis, h.ctx.leaderboard.keys.state('crashes', 'all', 'all'), 'crash');
    expect(await projected()).toBeNull();
    expect(await cached('crashes', 'crash')).toMatchObject({ score: 42, source: 'database' });
    // The retry finds every event already in the ledger and still projects them.
    const out = await processScoreJob(h.ctx, { ...j, wantResults: true });
    expect(out.results![0]).toMatchObject({ status: 'duplicate', score: 42, rank: expect.any(Number) });
    // Version 1, no region, ranked at its reached second.
    expect(await projected()).toMatch(/^1\|\|\d{11}$/);
  });

  it('the same crash through BullMQ: the job is retried and the events count once', async () => {
    const workers = (await import('../../src/jobs/start-workers.js')).startWorkers(h.ctx, { concurrency: 1 });
    try {
      let crashes = 0;
      h.faults.afterCommit = () => {
        if (crashes++ === 0) throw new Error('injected crash after commit');
      };
      const res = await h.api('POST', '/v1/events', {
        board: 'sums',
        member: 'bull',
        value: 7,
        idempotencyKey: 'bull-1',
      });
      expect(res.status).toBe(202);
      await h.drain();
      expect(crashes).toBe(2);
      expect(await ledgerCount('bull-1')).toBe(1);
      expect(await cached('sums', 'bull')).toMatchObject({ score: 7 });
    } finally {
      h.faults.afterCommit = undefined;
      await workers.close();
    }
  });
});

describe('concurrency', () => {
  it('two concurrent jobs for one member both count, and Redis ends equal to Postgres', async () => {
    const a = job(
      Array.from({ length: 50 }, (_, i) => ({ board: 'sums', member: 'race', value: 1, idempotencyKey: `race-a${i}` })),
    );
    const b = job(
      Array.from({ length: 50 }, (_, i) => ({ board: 'sums', member: 'race', value: 2, idempotencyKey: `race-b${i}` })),
    );
    await Promise.all([processScoreJob(h.ctx, a), processScoreJob(h.ctx, b), processScoreJob(h.ctx, a)]);
    const row = await aggregateRow('sums', 'race');
    expect(row!.value).toBe(150);
    expect(row!.event_count).toBe(100);
    expect(await cached('sums', 'race')).toMatchObject({ score: 150 });
  });

  it('a stale projection arriving late never overwrites a newer one', async () => {
    await processScoreJob(
      h.ctx,
      job([{ board: 'lasts', member: 'late', value: 1, idempotencyKey: 'late-1', occurredAt: '2026-01-01T00:00:00Z' }]),
    );
    const old = await aggregateRow('lasts', 'late');
    await processScoreJob(
      h.ctx,
      job([{ board: 'lasts', member: 'late', value: 2, idempotencyKey: 'late-2', occurredAt: '2026-01-02T00:00:00Z' }]),
    );
    // Replay the older state into Redis, as a slow worker would.
    await h.ctx.leaderboard.project(
      [
        {
          board: 'lasts',
          period: 'all',
          category: 'all',
          member: 'late',
          value: String(old!.value),
          reachedSec: 0,
          version: old!.version,
          region: null,
          hidden: false,
        },
      ],
      await h.ctx.boards.getMany(['lasts']),
    );
    expect(await cached('lasts', 'late')).toMatchObject({ score: 2 });
  });
});
