import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createHarness, type Harness } from '../support/harness.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';
import { processScoreJob } from '../../src/services/score-application.js';
import { payloadHash, type ScoreEventInput } from '../../src/domain/event.js';
import type { ScoreJob } from '../../src/queue/score-events-queue.js';
import { runTick } from '../../src/services/period-tick.js';
import { archiveLedger } from '../../src/services/ledger-archive.js';
import { verifyLeaderboards } from '../../src/services/verify-service.js';
import { processScopeRebuild } from '../../src/services/scope-rebuild.js';
import { recomputeAggregates } from '../../src/storage/postgres/moderation-repository.js';

/** Which table of the partitioned ledger holds each key. */
async function partitionsOf(db: Kysely<any>, keys: string[]): Promise<Record<string, string>> {
  const { rows } = await sql<{ key: string; part: string }>`
    SELECT idempotency_key AS key, tableoid::regclass::text AS part FROM score_events WHERE idempotency_key = ANY (${keys})`.execute(
    db,
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.part]));
}

async function attachedPartitions(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'score_events'::regclass ORDER BY 1`.execute(db);
  return rows.map((r) => r.name);
}

describe('the partitioned ledger in service', () => {
  let h: Harness;
  let outDir: string;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
    outDir = await mkdtemp(path.join(tmpdir(), 'laurel-archive-'));
    expect((await h.api('PUT', '/v1/boards/forever', { aggregation: 'sum', period: 'all' })).status).toBe(201);
    expect(
      (await h.api('PUT', '/v1/boards/monthly', { aggregation: 'best', period: 'month', graceSeconds: 0 })).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await h.close();
    await rm(outDir, { recursive: true, force: true });
  });

  function job(events: ScoreEventInput[], receivedAt = h.clock.now()): ScoreJob {
    return {
      events: events.map((posted) => ({
        posted,
        receivedAt: receivedAt.toISOString(),
        payloadHash: payloadHash(posted),
      })),
    };
  }

  async function apply(events: ScoreEventInput[]) {
    const out = await processScoreJob(h.ctx, { ...job(events), wantResults: true });
    return out.results!.map((r) => (r.status === 'rejected' ? `rejected:${r.reason}` : r.status));
  }

  async function ledgerCount(key: string) {
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM score_events WHERE idempotency_key = ${key}`.execute(h.ctx.db);
    return rows[0]!.n;
  }

  it('keeps idempotency global across monthly partitions', async () => {
    const first = {
      board: 'forever',
      member: 'idem',
      value: 5,
      idempotencyKey: 'x-month-1',
      occurredAt: '2026-10-15T10:00:00Z',
    };
    expect(await apply([first])).toEqual(['applied']);
    // The same event again: a duplicate. The same key stamped in another month (so in
    // another partition): still caught, as a conflict with the stored event.
    expect(await apply([first])).toEqual(['duplicate']);
    expect(await apply([{ ...first, occurredAt: '2026-11-20T10:00:00Z' }])).toEqual(['rejected:conflict']);
    expect(await apply([{ ...first, occurredAt: '2025-01-02T10:00:00Z' }])).toEqual(['rejected:conflict']);
    expect(await ledgerCount('x-month-1')).toBe(1);
    expect(await h.api('GET', '/v1/events/x-month-1')).toMatchObject({
      status: 200,
      body: { status: 'applied', value: 5 },
    });
    expect((await h.api('GET', '/v1/boards/forever/standings/idem?period=all')).body).toMatchObject({ score: 5 });
  });

  it('accepts an event of a month that has no partition, then the tick gives the month its partition', async () => {
    h.clock.set('2026-12-02T12:00:00Z');
    const old = {
      board: 'forever',
      member: 'old',
      value: 7,
      idempotencyKey: 'no-part-1',
      occurredAt: '2009-05-06T07:08:09Z',
    };
    expect(await apply([old, { ...old, idempotencyKey: 'no-part-2', value: 3 }])).toEqual(['applied', 'applied']);
    expect(await partitionsOf(h.ctx.db, ['no-part-1', 'no-part-2'])).toEqual({
      'no-part-1': 'score_events_default',
      'no-part-2': 'score_events_default',
    });

    await runTick(h.ctx);
    expect(await partitionsOf(h.ctx.db, ['no-part-1', 'no-part-2'])).toEqual({
      'no-part-1': 'score_events_p2009_05',
      'no-part-2': 'score_events_p2009_05',
    });
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM score_events_default`.execute(h.ctx.db);
    expect(rows[0]!.n).toBe(0);
    // Nothing about the event changed: found by key, counted once, voidable.
    expect((await h.api('GET', '/v1/events/no-part-1')).body).toMatchObject({ status: 'applied', value: 7 });
    expect((await h.api('GET', '/v1/boards/forever/standings/old?period=all')).body).toMatchObject({ score: 10 });
    expect(await apply([old])).toEqual(['duplicate']);
    const voided = await h.api('POST', '/v1/events/no-part-2/void', { reason: 'test' });
    expect(voided.status).toBe(200);
    expect((await h.api('GET', '/v1/boards/forever/standings/old?period=all')).body).toMatchObject({ score: 7 });
  });

  it('loses no event while ticks create partitions under concurrent ingestion', async () => {
    // Batches of months without a partition race ticks that create those months. A batch may
    // fail (as BullMQ would see it) and is then retried; none may end up counted twice or lost.
    h.clock.set('2026-12-02T12:00:00Z');
    const months = ['2011-01', '2011-02', '2011-03', '2011-04', '2011-05', '2011-06'];
    const batches = months.flatMap((m, i) =>
      [0, 1, 2].map((j) =>
        Array.from({ length: 50 }, (_, k) => ({
          board: 'forever',
          member: `race${k % 7}`,
          value: 1,
          idempotencyKey: `race-${i}-${j}-${k}`,
          occurredAt: `${m}-${String(10 + j).padStart(2, '0')}T00:00:00Z`,
        })),
      ),
    );
    let retries = 0;
    const ingest = (async () => {
      for (const events of batches) {
        for (let attempt = 1; ; attempt += 1) {
          try {
            await processScoreJob(h.ctx, job(events));
            break;
          } catch (err) {
            retries += 1;
            if (attempt >= 5) throw err;
          }
        }
      }
    })();
    const ticks = (async () => {
      for (let i = 0; i < 6; i += 1) {
        await runTick(h.ctx);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await Promise.all([ingest, ticks]);
    await runTick(h.ctx);
    const { rows } = await sql<{ part: string; n: number }>`
      SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM score_events WHERE idempotency_key LIKE 'race-%' GROUP BY 1 ORDER BY 1`.execute(
      h.ctx.db,
    );
    expect(rows).toEqual(months.map((m) => ({ part: `score_events_p${m.replace('-', '_')}`, n: 150 })));
    const total = await sql<{ v: number }>`
      SELECT sum(value)::int AS v FROM member_aggregates WHERE board_id = 'forever' AND period_key = 'all' AND category = 'all' AND member_id LIKE 'race%'`.execute(
      h.ctx.db,
    );
    expect(total.rows[0]!.v).toBe(900);
    expect(retries).toBeLessThan(batches.length);
  });

  it('creates this month and the next three ahead on every tick', async () => {
    h.clock.set('2031-02-10T00:00:00Z');
    await runTick(h.ctx);
    const names = await attachedPartitions(h.ctx.db);
    for (const m of ['2031_02', '2031_03', '2031_04', '2031_05']) expect(names).toContain(`score_events_p${m}`);
    expect(names).not.toContain('score_events_p2031_06');
    // Again: nothing new, nothing fails.
    await runTick(h.ctx);
    expect(await attachedPartitions(h.ctx.db)).toEqual(names);
  });

  it('archives only months whose periods are all closed, keeps results and idempotency, and is safe to re-run', async () => {
    // September 2026 on a monthly board (closed in October), and August on the board that never closes.
    h.clock.set('2026-09-20T12:00:00Z');
    await runTick(h.ctx);
    const at = Date.parse('2026-09-10T10:00:00Z');
    const events: RefEvent[] = Array.from({ length: 40 }, (_, i) => ({
      key: `sep-${i}`,
      member: `s${i % 12}`,
      units: (i * 37) % 101,
      atMs: at + i * 60_000,
    }));
    const posted = events.map((e) => ({
      board: 'monthly',
      member: e.member,
      value: e.units,
      idempotencyKey: e.key,
      occurredAt: new Date(e.atMs).toISOString(),
    }));
    expect(new Set(await apply(posted))).toEqual(new Set(['applied']));
    expect(
      await apply([
        { board: 'forever', member: 'aug', value: 1, idempotencyKey: 'aug-1', occurredAt: '2026-08-31T23:00:00Z' },
      ]),
    ).toEqual(['applied']);
    h.clock.set('2026-10-05T00:00:00Z');
    await runTick(h.ctx);
    const period = await sql<{
      state: string;
    }>`SELECT state FROM periods WHERE board_id = 'monthly' AND key = '2026-09'`.execute(h.ctx.db);
    expect(period.rows[0]!.state).toBe('closed');

    await expect(archiveLedger(h.ctx, { before: '2026-11' })).rejects.toThrow(/after the current month/);
    await expect(archiveLedger(h.ctx, { before: '2026-10', drop: true })).rejects.toThrow(/needs --out/);

    const first = await archiveLedger(h.ctx, { before: '2026-10', outDir });
    expect(first.archived.map((a) => [a.month, a.events, a.dropped])).toEqual([['2026-09', 40, false]]);
    // August holds an event of the `all` period, which never closes; so do the older months
    // the tests above filled.
    const refused = first.refused.map((r) => r.month);
    expect(refused).toEqual(expect.arrayContaining(['2009-05', '2026-08']));
    for (const r of first.refused) expect(r.reason).toMatch(/forever\/all \(open\)/);
    const names = await attachedPartitions(h.ctx.db);
    expect(names).not.toContain('score_events_p2026_09');
    expect(names).toEqual(
      expect.arrayContaining(['score_events_p2026_08', 'score_events_p2026_10', 'score_events_default']),
    );
    const kept = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger_archive.score_events_p2026_09`.execute(
      h.ctx.db,
    );
    expect(kept.rows[0]!.n).toBe(40);
    expect(await readdir(outDir)).toEqual(['score_events_2026-09.csv.gz']);
    // The file holds every member's events: readable by its owner only, whatever the umask.
    expect((await stat(path.join(outDir, 'score_events_2026-09.csv.gz'))).mode & 0o777).toBe(0o600);
    const csv = gunzipSync(await readFile(path.join(outDir, 'score_events_2026-09.csv.gz')))
      .toString('utf8')
      .trim()
      .split('\n');
    expect(csv[0]).toMatch(/^id,idempotency_key,board_id,period_key,member_id/);
    expect(
      csv
        .slice(1)
        .map((l) => l.split(',')[1])
        .sort(),
    ).toEqual(events.map((e) => e.key).sort());

    // The closed period keeps its final results, equal to an independent reference.
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'first' });
    const results = await h.api('GET', '/v1/boards/monthly/periods/2026-09/results?limit=100');
    expect(results.status).toBe(200);
    expect(results.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );
    // Its keys are still known; its events cannot be recounted from a ledger that lost them.
    expect(await apply([posted[0]!])).toEqual(['duplicate']);
    const status = await h.api('GET', '/v1/events/sep-0');
    expect(status.status).toBe(404);
    expect(status.body.message).toMatch(/archived with the ledger of 2026-09/);
    await expect(
      recomputeAggregates(
        h.ctx.db,
        { board: 'monthly', period: '2026-09', member: null, category: null },
        h.clock.now(),
      ),
    ).rejects.toThrow(/archived/);
    const fromEvents = await h.api('POST', '/v1/admin/rebuilds', {
      board: 'monthly',
      period: '2026-09',
      fromEvents: true,
    });
    expect(fromEvents).toMatchObject({ status: 409, body: { error: 'conflict', details: [{ path: 'fromEvents' }] } });
    // Rebuilding Redis from the stored aggregates still works, and verify finds it equal.
    await processScopeRebuild(h.ctx, {
      board: 'monthly',
      period: '2026-09',
      category: 'all',
      fromEvents: false,
      trigger: 'test',
    });
    expect(await verifyLeaderboards(h.ctx, { board: 'monthly', period: '2026-09' })).toEqual({
      scopes: 1,
      differences: [],
      missing: [],
    });
    const rebuild = await sql<{ value: number; n: number }>`
      SELECT max(value)::int AS value, count(*)::int AS n FROM member_aggregates WHERE board_id = 'monthly' AND period_key = '2026-09' AND category = 'all'`.execute(
      h.ctx.db,
    );
    expect(rebuild.rows[0]).toEqual({ value: expected[0]!.units, n: 12 });

    // Again, now dropping: the file is already written, the table goes, nothing else moves.
    const second = await archiveLedger(h.ctx, { before: '2026-10', outDir, drop: true });
    expect(second.archived.map((a) => [a.month, a.events, a.dropped])).toEqual([['2026-09', 40, true]]);
    const gone = await sql<{
      t: string | null;
    }>`SELECT to_regclass('ledger_archive.score_events_p2026_09')::text AS t`.execute(h.ctx.db);
    expect(gone.rows[0]!.t).toBeNull();
    expect(await readdir(outDir)).toEqual(['score_events_2026-09.csv.gz']);
    const third = await archiveLedger(h.ctx, { before: '2026-10', outDir, drop: true });
    expect(third.archived).toEqual([]);
    expect(third.refused.map((r) => r.month)).toEqual(refused);
    expect(await ledgerCount('aug-1')).toBe(1);
  });
});
