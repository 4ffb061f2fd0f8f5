import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';
import { referenceStandings } from '../support/reference.js';
import { payloadHash, type ScoreEventInput } from '../../src/domain/event.js';
import { Unavailable } from '../../src/domain/errors.js';
import { enqueue } from '../../src/queue/enqueue.js';
import { jobOf } from '../../src/queue/score-events-queue.js';

/**
 * Group commit at the intake (src/services/intake-groups.ts): concurrent requests of a web
 * process join one queue job. The window is long here (1 s, so a loaded machine still posts them within it), so requests posted together
 * surely share a group; each request must still get its own answer, as if it had come alone.
 */
let h: Harness;
/** Job ids of the Postgres commits, one per laurel_apply_batch call that committed. */
const commits: Array<string | undefined> = [];
beforeAll(async () => {
  h = await createHarness({ concurrency: 1, env: { INTAKE_GROUP_WINDOW_MS: '1000' } });
  h.faults.afterCommit = (jobId) => void commits.push(jobId);
  for (const [id, aggregation] of [
    ['g-sum', 'sum'],
    ['g-best', 'best'],
  ] as const)
    expect((await h.api('PUT', `/v1/boards/${id}`, { aggregation, period: 'all', tieBreak: 'member' })).status).toBe(
      201,
    );
  expect(
    (
      await h.api('PUT', '/v1/boards/g-window', {
        aggregation: 'sum',
        period: 'all',
        window: { startsAt: '2026-01-01T00:00:00Z', endsAt: '2027-01-01T00:00:00Z' },
      })
    ).status,
  ).toBe(201);
});
afterAll(() => h.close());

/**
 * Posts each body as its own request, `gapMs` apart (so they reach the intake in this order),
 * all within one group window; resolves with every answer once the queue has drained.
 */
async function postTogether(bodies: object[], options: { wait?: boolean[]; gapMs?: number } = {}) {
  commits.length = 0;
  const answers: Array<Promise<{ status: number; body: any }>> = [];
  for (const [i, body] of bodies.entries()) {
    answers.push(h.api('POST', `/v1/events${options.wait?.[i] ? '?wait=true' : ''}`, body));
    if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
  }
  const out = await Promise.all(answers);
  await h.drain();
  return out;
}

const jobsOf = (ids: ReadonlyArray<string | undefined>) => new Set(ids).size;

describe('intake groups', () => {
  it('join concurrent one-event requests into one job, every event once, ranked as a reference', async () => {
    const events = Array.from({ length: 120 }, (_, i) => ({
      board: 'g-sum',
      member: `m${i % 17}`,
      value: 1 + ((i * 7) % 13),
      idempotencyKey: `g-${i}`,
    }));
    const answers = await postTogether(events);
    expect(answers.map((a) => a.status)).toEqual(events.map(() => 202));
    expect(answers.map((a) => a.body)).toEqual(events.map(() => ({ accepted: 1 })));
    // Joined: on a quiet machine all 120 reach one or two windows; a loaded one spreads them
    // over a few more, never one job a request. 17 members: a member's later requests go to
    // later rounds (calls) of the same job, at most ceil(120 / 17) of them a job.
    expect(jobsOf(commits)).toBeLessThanOrEqual(12);
    expect(commits.length).toBeLessThanOrEqual(jobsOf(commits) * Math.ceil(120 / 17));

    const expected = referenceStandings(
      events.map((e, i) => ({ key: e.idempotencyKey, member: e.member, units: e.value, atMs: i })),
      { aggregation: 'sum', order: 'desc', tieBreak: 'member' },
    );
    const page = await h.api('GET', '/v1/boards/g-sum/standings?period=all&limit=200');
    expect(page.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );
    const { rows } = await sql<{
      n: number;
      d: number;
    }>`SELECT count(*)::int AS n, count(DISTINCT idempotency_key)::int AS d FROM score_events WHERE board_id = 'g-sum'`.execute(
      h.ctx.db,
    );
    expect(rows[0]).toEqual({ n: 120, d: 120 });
    for (const e of events.slice(0, 5))
      expect((await h.api('GET', `/v1/events/${e.idempotencyKey}`)).body.status).toBe('applied');
  });

  it('say pending for the keys of a group not applied yet', async () => {
    await h.ctx.scoreQueue.pause();
    try {
      const answers = await Promise.all(
        ['gp-1', 'gp-2'].map((key) =>
          h.api('POST', '/v1/events', { board: 'g-sum', member: 'pend', value: 1, idempotencyKey: key }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([202, 202]);
      const statuses = await Promise.all(['gp-1', 'gp-2'].map((key) => h.api('GET', `/v1/events/${key}`)));
      expect(statuses.map((s) => s.body.status)).toEqual(['pending', 'pending']);
      expect(statuses[0]!.body.jobId).toBe(statuses[1]!.body.jobId);
    } finally {
      await h.ctx.scoreQueue.resume();
    }
    await h.drain();
    expect((await h.api('GET', '/v1/events/gp-2')).body.status).toBe('applied');
  });

  it('answer each ?wait=true request with its own events only, previous placement included', async () => {
    await h.postEvents([{ board: 'g-best', member: 'w3', value: 20, idempotencyKey: 'gw-0' }]);
    const bodies = [
      { events: [{ board: 'g-best', member: 'w1', value: 10, idempotencyKey: 'gw-1' }] },
      {
        events: [
          { board: 'g-best', member: 'w2', value: 30, idempotencyKey: 'gw-2' },
          { board: 'g-sum', member: 'w2', value: 2, idempotencyKey: 'gw-3' },
        ],
      },
      { board: 'g-best', member: 'w4', value: 1, idempotencyKey: 'gw-4' },
      { events: [{ board: 'g-best', member: 'w3', value: 25, idempotencyKey: 'gw-5' }] },
    ];
    const answers = await postTogether(bodies, { wait: [true, true, false, true] });
    expect(answers.map((a) => a.status)).toEqual([200, 200, 202, 200]);
    expect(jobsOf(commits)).toBe(1);
    expect(answers[0]!.body.results).toEqual([
      expect.objectContaining({ idempotencyKey: 'gw-1', status: 'applied', period: 'all', score: 10 }),
    ]);
    expect(answers[1]!.body.results).toEqual([
      expect.objectContaining({ idempotencyKey: 'gw-2', status: 'applied', score: 30, rank: 1, previousRank: null }),
      expect.objectContaining({ idempotencyKey: 'gw-3', status: 'applied', score: 2 }),
    ]);
    expect(answers[2]!.body).toEqual({ accepted: 1 });
    expect(answers[3]!.body.results).toEqual([
      expect.objectContaining({
        idempotencyKey: 'gw-5',
        status: 'applied',
        score: 25,
        rank: 2,
        previousScore: 20,
        previousRank: 1,
      }),
    ]);
  });

  it('judge a key repeated across requests of one group as if each request came alone', async () => {
    // The first copy is refused (outside the window): the key is not claimed, so the
    // second request's copy counts. In one call it would have followed the first copy.
    const answers = await postTogether(
      [
        { board: 'g-window', member: 'r1', value: 4, idempotencyKey: 'gr-1', occurredAt: '2025-06-01T00:00:00Z' },
        { board: 'g-window', member: 'r1', value: 6, idempotencyKey: 'gr-1' },
        { board: 'g-window', member: 'r2', value: 1, idempotencyKey: 'gr-2' },
      ],
      { wait: [true, true, true], gapMs: 20 },
    );
    expect(answers.map((a) => a.body.results?.[0]?.status)).toEqual(['rejected', 'applied', 'applied']);
    expect(jobsOf(commits)).toBe(1);
    expect((await h.api('GET', '/v1/events/gr-1')).body).toMatchObject({ status: 'applied', value: 6 });
  });

  it("judge a member's requests one after the other (a sum's range, the previous placement)", async () => {
    const limit = 2 ** 40;
    const answers = await postTogether(
      [
        { board: 'g-sum', member: 'big', value: limit - 10, idempotencyKey: 'gb-1' },
        { board: 'g-sum', member: 'big', value: 20, idempotencyKey: 'gb-2' },
        { board: 'g-sum', member: 'big', value: 5, idempotencyKey: 'gb-3' },
      ],
      { wait: [true, true, true], gapMs: 20 },
    );
    // Alone, one after the other: the first fits, the second would leave ±2^40, the third fits.
    expect(answers.map((a) => [a.body.results?.[0]?.status, a.body.results?.[0]?.reason ?? null])).toEqual([
      ['applied', null],
      ['rejected', 'out_of_range'],
      ['applied', null],
    ]);
    expect(answers[0]!.body.results[0]).toMatchObject({ previousScore: null, score: limit - 10 });
    expect(answers[2]!.body.results[0]).toMatchObject({ previousScore: limit - 10, score: limit - 5 });
    expect(jobsOf(commits)).toBe(1);
    expect(commits).toHaveLength(3);
  });

  it('let the requests of one group enter a maxMembers board in the order they arrived', async () => {
    expect((await h.api('PUT', '/v1/boards/g-cap', { aggregation: 'best', period: 'all', maxMembers: 1 })).status).toBe(
      201,
    );
    // Alone, one after the other, the first request's member takes the only place, although
    // the second request's event happened earlier: across requests, entry follows arrival.
    const answers = await postTogether(
      [
        { board: 'g-cap', member: 'late', value: 1, idempotencyKey: 'gc-1', occurredAt: '2026-06-01T00:00:05Z' },
        { board: 'g-cap', member: 'early', value: 9, idempotencyKey: 'gc-2', occurredAt: '2026-06-01T00:00:00Z' },
      ],
      { wait: [true, true], gapMs: 20 },
    );
    expect(answers.map((a) => [a.body.results?.[0]?.status, a.body.results?.[0]?.reason ?? null])).toEqual([
      ['applied', null],
      ['rejected', 'board_full'],
    ]);
    expect(jobsOf(commits)).toBe(1);
  });

  it('answer 400 to an invalid request alone; the others of its window are accepted', async () => {
    const answers = await postTogether([
      { board: 'g-sum', member: 'v1', value: 1, idempotencyKey: 'gv-1' },
      { board: 'g-sum', member: 'v2', value: 'many', idempotencyKey: 'gv-2' },
      { events: [{ board: 'g-sum', member: 'v3', value: 1, idempotencyKey: 'gv-3', category: 'nope' }] },
      { board: 'g-sum', member: 'v4', value: 1, idempotencyKey: 'gv-4' },
    ]);
    expect(answers.map((a) => a.status)).toEqual([202, 400, 400, 202]);
    expect(answers[1]!.body.details).toEqual([expect.objectContaining({ path: 'value' })]);
    expect(answers[2]!.body.details).toEqual([expect.objectContaining({ index: 0, path: 'category' })]);
    expect(jobsOf(commits)).toBe(1);
    expect((await h.api('GET', '/v1/events/gv-4')).body.status).toBe('applied');
    expect((await h.api('GET', '/v1/events/gv-2')).status).toBe(404);
  });

  it('answer every request of a group 503 when its add fails, and accept none of them', async () => {
    let failed = 0;
    h.faults.beforeGroupAdd = () => {
      failed += 1;
      throw new Unavailable('injected: the queue refused the add', undefined, { dependency: 'queue-redis' });
    };
    let answers;
    try {
      answers = await postTogether(
        ['gf-1', 'gf-2', 'gf-3'].map((key) => ({ board: 'g-sum', member: key, value: 1, idempotencyKey: key })),
      );
    } finally {
      h.faults.beforeGroupAdd = undefined;
    }
    expect(failed).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
    expect(answers[0]!.body).toMatchObject({ error: 'unavailable' });
    for (const key of ['gf-1', 'gf-2', 'gf-3']) expect((await h.api('GET', `/v1/events/${key}`)).status).toBe(404);
    // The next group is added as usual.
    const again = await postTogether([{ board: 'g-sum', member: 'gf-1', value: 1, idempotencyKey: 'gf-1' }]);
    expect(again[0]!.status).toBe(202);
    expect((await h.api('GET', '/v1/events/gf-1')).body.status).toBe('applied');
  });

  it('keep a group within 1000 events: a request that would pass it starts the next one', async () => {
    const request = (n: number) => ({
      events: Array.from({ length: 400 }, (_, i) => ({
        board: 'g-sum',
        member: `k${n}-${i}`,
        value: 1,
        idempotencyKey: `gk-${n}-${i}`,
      })),
    });
    const answers = await postTogether([request(0), request(1), request(2)], { gapMs: 20 });
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    // 400 + 400 fit, the third would make 1200: two jobs, in arrival order.
    expect(jobsOf(commits)).toBe(2);
    const jobs = await Promise.all([...new Set(commits)].map((id) => h.ctx.scoreQueue.getJob(id!)));
    expect(jobs.map((j) => j?.data.requests?.map((r) => r.events))).toEqual([[400, 400], [400]]);
  });

  it('apply the other requests of a job at once when one names a board not there yet, and retry that one', async () => {
    const queued = (posted: ScoreEventInput) => ({
      events: [{ posted, receivedAt: new Date().toISOString(), payloadHash: payloadHash(posted) }],
      wantResults: false,
    });
    // Queued straight to the worker: intake would have refused the unknown board with a 400
    // (a board can be missing only for a worker that does not see it yet).
    const job = await enqueue(
      h.ctx.scoreQueue,
      'apply',
      jobOf([
        queued({ board: 'g-sum', member: 'f1', value: 3, idempotencyKey: 'gx-1' }),
        queued({ board: 'g-late', member: 'f2', value: 3, idempotencyKey: 'gx-2' }),
        queued({ board: 'g-sum', member: 'f3', value: 3, idempotencyKey: 'gx-3' }),
      ]),
    );
    await until('the job retried', async () => ((await job.getState()) === 'delayed' ? true : undefined));
    expect((await h.api('GET', '/v1/events/gx-1')).body.status).toBe('applied');
    expect((await h.api('GET', '/v1/events/gx-3')).body.status).toBe('applied');
    // Not in the ledger (and not marked pending: intake did not queue it).
    expect((await h.api('GET', '/v1/events/gx-2')).status).toBe(404);
    expect((await h.api('PUT', '/v1/boards/g-late', { aggregation: 'sum', period: 'all' })).status).toBe(201);
    await until('the job completed', async () => (await job.isCompleted()) || undefined, { timeoutMs: 20_000 });
    expect((await h.api('GET', '/v1/events/gx-2')).body.status).toBe('applied');
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM score_events WHERE idempotency_key LIKE 'gx-%'`.execute(h.ctx.db);
    expect(rows[0]!.n).toBe(3);
  });
});
