import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';
import { referenceStandings } from '../support/reference.js';
import { payloadHash, type ScoreEventInput } from '../../src/domain/event.js';
import type { ScoreJob } from '../../src/queue/score-events-queue.js';

/**
 * The score worker applies every job waiting behind the one it is handed in one call
 * (src/jobs/score-coalescer.ts). Jobs pile up here behind a paused queue, so that one run
 * finds them all; each request must still get its own answer, as if it had come alone.
 */
let h: Harness;
/** Job ids of the Postgres commits, one per laurel_apply_batch call that committed. */
const commits: Array<string | undefined> = [];
beforeAll(async () => {
  h = await createHarness({ concurrency: 1 });
  h.faults.afterCommit = (jobId) => void commits.push(jobId);
  for (const id of ['co-sum', 'co-best']) {
    expect(
      (
        await h.api('PUT', `/v1/boards/${id}`, {
          aggregation: id === 'co-sum' ? 'sum' : 'best',
          period: 'all',
          tieBreak: 'member',
        })
      ).status,
    ).toBe(201);
  }
  expect(
    (
      await h.api('PUT', '/v1/boards/co-window', {
        aggregation: 'sum',
        period: 'all',
        window: { startsAt: '2026-01-01T00:00:00Z', endsAt: '2027-01-01T00:00:00Z' },
      })
    ).status,
  ).toBe(201);
});
afterAll(() => h.close());

/** Posts each body as its own request while the queue is paused, then lets the worker run. */
async function postHeld(bodies: object[], wait: boolean[] = bodies.map(() => false)) {
  await h.ctx.scoreQueue.pause();
  const answers: Array<Promise<{ status: number; body: any }>> = [];
  try {
    for (const [i, body] of bodies.entries()) {
      const answer = h.api('POST', `/v1/events${wait[i] ? '?wait=true' : ''}`, body);
      answers.push(answer);
      // Enqueued in order: a ?wait=true request is only in the queue once its add returned.
      await until('job enqueued', async () => {
        const counts = await h.ctx.scoreQueue.getJobCounts('waiting');
        return (counts.waiting ?? 0) >= i + 1 || undefined;
      });
    }
  } finally {
    commits.length = 0;
    await h.ctx.scoreQueue.resume();
  }
  const out = await Promise.all(answers);
  await h.drain();
  return out;
}

describe('coalesced score jobs', () => {
  it('apply many one-event requests in a few calls, every event once, ranked as a reference', async () => {
    const events = Array.from({ length: 120 }, (_, i) => ({
      board: 'co-sum',
      member: `m${i % 17}`,
      value: 1 + ((i * 7) % 13),
      idempotencyKey: `co-${i}`,
    }));
    const answers = await postHeld(events);
    expect(answers.map((a) => a.status)).toEqual(events.map(() => 202));
    // One worker slot: the first run takes every waiting job up to its bound.
    expect(commits.length).toBeLessThan(10);

    const expected = referenceStandings(
      events.map((e, i) => ({ key: e.idempotencyKey, member: e.member, units: e.value, atMs: i })),
      { aggregation: 'sum', order: 'desc', tieBreak: 'member' },
    );
    const page = await h.api('GET', '/v1/boards/co-sum/standings?period=all&limit=200');
    expect(page.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );
    const { rows } = await sql<{
      n: number;
      d: number;
    }>`SELECT count(*)::int AS n, count(DISTINCT idempotency_key)::int AS d FROM score_events WHERE board_id = 'co-sum'`.execute(
      h.ctx.db,
    );
    expect(rows[0]).toEqual({ n: 120, d: 120 });
    for (const e of events.slice(0, 5))
      expect((await h.api('GET', `/v1/events/${e.idempotencyKey}`)).body.status).toBe('applied');
  });

  it('answer each ?wait=true request with its own events only', async () => {
    const bodies = [
      { events: [{ board: 'co-best', member: 'w1', value: 10, idempotencyKey: 'cw-1' }] },
      {
        events: [
          { board: 'co-best', member: 'w2', value: 30, idempotencyKey: 'cw-2' },
          { board: 'co-sum', member: 'w2', value: 2, idempotencyKey: 'cw-3' },
        ],
      },
      { events: [{ board: 'co-best', member: 'w1', value: 5, idempotencyKey: 'cw-1' }] },
    ];
    const answers = await postHeld(bodies, [true, true, true]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.body.results).toEqual([
      expect.objectContaining({
        idempotencyKey: 'cw-1',
        status: 'applied',
        period: 'all',
        score: 10,
        rank: 2,
        previousRank: null,
      }),
    ]);
    expect(answers[1]!.body.results).toEqual([
      expect.objectContaining({ idempotencyKey: 'cw-2', status: 'applied', score: 30, rank: 1 }),
      expect.objectContaining({ idempotencyKey: 'cw-3', status: 'applied', score: 2 }),
    ]);
    // The same key with another payload in a later request: judged against the ledger.
    expect(answers[2]!.body.results).toEqual([
      expect.objectContaining({ idempotencyKey: 'cw-1', status: 'rejected', reason: 'conflict' }),
    ]);
  });

  it('judge a key repeated across requests as if each request came alone', async () => {
    // The first copy is refused (outside the window): the key is not claimed, so the
    // second request's copy counts. In one call it would have followed the first copy.
    const answers = await postHeld(
      [
        { board: 'co-window', member: 'r1', value: 4, idempotencyKey: 'cr-1', occurredAt: '2025-06-01T00:00:00Z' },
        { board: 'co-window', member: 'r1', value: 6, idempotencyKey: 'cr-1' },
        { board: 'co-window', member: 'r2', value: 1, idempotencyKey: 'cr-2' },
      ],
      [true, true, true],
    );
    expect(answers.map((a) => a.body.results?.[0]?.status)).toEqual(['rejected', 'applied', 'applied']);
    expect((await h.api('GET', '/v1/events/cr-1')).body).toMatchObject({ status: 'applied', value: 6 });
  });

  it("judge a member's requests one after the other (a sum's range, the previous placement)", async () => {
    const limit = 2 ** 40;
    const answers = await postHeld(
      [
        { board: 'co-sum', member: 'big', value: limit - 10, idempotencyKey: 'cb-1' },
        { board: 'co-sum', member: 'big', value: 20, idempotencyKey: 'cb-2' },
        { board: 'co-sum', member: 'big', value: 5, idempotencyKey: 'cb-3' },
      ],
      [true, true, true],
    );
    // Alone, one after the other: the first fits, the second would leave ±2^40, the third fits.
    expect(answers.map((a) => [a.body.results?.[0]?.status, a.body.results?.[0]?.reason ?? null])).toEqual([
      ['applied', null],
      ['rejected', 'out_of_range'],
      ['applied', null],
    ]);
    expect(answers[0]!.body.results[0]).toMatchObject({ previousScore: null, score: limit - 10 });
    expect(answers[2]!.body.results[0]).toMatchObject({ previousScore: limit - 10, score: limit - 5 });
  });

  it('let requests enter a maxMembers board in the order they were queued, as if each came alone', async () => {
    expect(
      (await h.api('PUT', '/v1/boards/co-cap', { aggregation: 'best', period: 'all', maxMembers: 1 })).status,
    ).toBe(201);
    // Alone, one after the other, the first request's member takes the only place, although
    // the second request's event happened earlier: across batches, entry follows application.
    const answers = await postHeld(
      [
        { board: 'co-cap', member: 'late', value: 1, idempotencyKey: 'cc-1', occurredAt: '2026-06-01T00:00:05Z' },
        { board: 'co-cap', member: 'early', value: 9, idempotencyKey: 'cc-2', occurredAt: '2026-06-01T00:00:00Z' },
      ],
      [true, true],
    );
    expect(answers.map((a) => [a.body.results?.[0]?.status, a.body.results?.[0]?.reason ?? null])).toEqual([
      ['applied', null],
      ['rejected', 'board_full'],
    ]);
  });

  it('fail only the job at fault when a job fails the call (a missing board, text Postgres cannot store)', async () => {
    const job = (posted: ScoreEventInput): ScoreJob => ({
      events: [{ posted, receivedAt: new Date().toISOString(), payloadHash: payloadHash(posted) }],
    });
    await h.ctx.scoreQueue.pause();
    const good1 = await h.ctx.scoreQueue.add(
      'apply',
      job({ board: 'co-sum', member: 'f1', value: 3, idempotencyKey: 'cf-1' }),
    );
    const noBoard = await h.ctx.scoreQueue.add(
      'apply',
      job({ board: 'co-gone', member: 'f2', value: 3, idempotencyKey: 'cf-2' }),
    );
    const nul = await h.ctx.scoreQueue.add(
      'apply',
      job({ board: 'co-sum', member: 'f3', value: 3, idempotencyKey: 'cf-3', metadata: { note: 'a\u0000b' } }),
    );
    const good2 = await h.ctx.scoreQueue.add(
      'apply',
      job({ board: 'co-sum', member: 'f4', value: 3, idempotencyKey: 'cf-4' }),
    );
    await h.ctx.scoreQueue.resume();

    await until(
      'good jobs completed',
      async () => ((await good1.isCompleted()) && (await good2.isCompleted())) || undefined,
    );
    await until('unstorable job failed for good', async () => (await nul.isFailed()) || undefined);
    // A missing board may be a definition not yet visible: retried, never completed...
    expect(await noBoard.isCompleted()).toBe(false);
    expect((await h.api('GET', '/v1/events/cf-1')).body.status).toBe('applied');
    expect((await h.api('GET', '/v1/events/cf-4')).body.status).toBe('applied');
    expect((await h.api('GET', '/v1/events/cf-3')).status).toBe(404);
    // ...until it exists.
    expect((await h.api('PUT', '/v1/boards/co-gone', { aggregation: 'sum', period: 'all' })).status).toBe(201);
    await until('job of the late board completed', async () => (await noBoard.isCompleted()) || undefined, {
      timeoutMs: 20_000,
    });
    expect((await h.api('GET', '/v1/events/cf-2')).body.status).toBe('applied');
  });
});
