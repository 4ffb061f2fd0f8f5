import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { createHarness, type Harness } from '../support/harness.js';
import { databaseUrl, dropDatabase, withAdminClient } from '../support/databases.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';
import { processScoreJob } from '../../workers/score-processor.js';
import { payloadHash, type ScoreEventInput } from '../../src/domain/event.js';
import type { ScoreJob } from '../../src/queue/score-events-queue.js';
import { runTick } from '../../workers/period-tick.js';
import { archiveLedger } from '../../src/services/ledger-archive.js';
import { verifyLeaderboards } from '../../src/services/verify-service.js';
import { processScopeRebuild } from '../../workers/rebuild-processor.js';
import { createPostgres } from '../../src/storage/postgres/database.js';
import { MIGRATIONS_DIR } from '../../src/storage/postgres/migrator.js';
import { recomputeAggregates } from '../../src/storage/postgres/moderation-repository.js';
import { applyBatch } from '../../src/storage/postgres/events-repository.js';

/** Which table of the partitioned ledger holds each key. */
async function partitionsOf(db: Kysely<any>, keys: string[]): Promise<Record<string, string>> {
  const { rows } = await sql<{ key: string; part: string }>`
    SELECT idempotency_key AS key, tableoid::regclass::text AS part FROM score_events WHERE idempotency_key = ANY (${keys})`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.key, r.part]));
}

async function attachedPartitions(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'score_events'::regclass ORDER BY 1`.execute(db);
  return rows.map((r) => r.name);
}

describe('migrating a ledger that has events', () => {
  const name = `laurel_mig_${process.pid}_${randomBytes(3).toString('hex')}`;
  let db: Kysely<any>;
  beforeAll(async () => {
    await withAdminClient((c) => c.query(`CREATE DATABASE "${name}"`));
    db = createPostgres(databaseUrl(name), { max: 2 }).db;
  });
  afterAll(async () => {
    await db.destroy();
    await dropDatabase(name);
  });

  it('moves every event into the partition of its month, keeps ids, keys and foreign keys', async () => {
    // The test runner loads the TypeScript migrations itself (Kysely's file provider cannot here).
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const f of files) migrations[f.replace(/\.ts$/, '')] = (await import(path.join(MIGRATIONS_DIR, f))) as Migration;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('2026-12-02-0005-period-lifecycle')).error).toBeUndefined();
    await sql`
      INSERT INTO boards (id, display_name, aggregation, sort_order, tie_break, period_kind, timezone, decimals, grace_seconds, awards)
      VALUES ('old', 'Old', 'sum', 'desc', 'first', 'all', 'UTC', 0, 0, '{}'::jsonb)`.execute(db);
    await sql`INSERT INTO periods (board_id, key, starts_at, ends_at) VALUES ('old', 'all', '2000-01-01T00:00:00Z', NULL)`.execute(db);
    // 3,000 events over 2005 and 2026: the migration must create the months that have events.
    await sql`
      INSERT INTO score_events (idempotency_key, board_id, period_key, member_id, value, occurred_at, received_at, applied_at, payload_hash)
      SELECT 'mig-' || g, 'old', 'all', 'm' || (g % 50), g,
             CASE WHEN g % 3 = 0 THEN timestamptz '2005-03-31T23:59:59Z'
                  WHEN g % 3 = 1 THEN timestamptz '2026-07-01T00:00:00Z' + make_interval(secs => g)
                  ELSE timestamptz '2026-08-15T12:00:00Z' END,
             now(), now(), 'h' || g
        FROM generate_series(1, 3000) g`.execute(db);
    const before = await sql<{ n: number; max: number; sum: number }>`
      SELECT count(*)::int AS n, max(id)::int AS max, sum(value)::int AS sum FROM score_events`.execute(db);

    const latest = await migrator.migrateToLatest();
    expect(latest.error).toBeUndefined();
    expect(latest.results?.map((r) => r.migrationName)).toContain('2026-12-02-0006-partitioned-ledger');

    const after = await sql<{ n: number; max: number; sum: number }>`
      SELECT count(*)::int AS n, max(id)::int AS max, sum(value)::int AS sum FROM score_events`.execute(db);
    expect(after.rows[0]).toEqual(before.rows[0]);
    const keys = await sql<{ n: number }>`SELECT count(*)::int AS n FROM score_event_keys`.execute(db);
    expect(keys.rows[0]!.n).toBe(3000);
    const perPartition = await sql<{ part: string; n: number }>`
      SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM score_events GROUP BY 1 ORDER BY 1`.execute(db);
    expect(perPartition.rows).toEqual([
      { part: 'score_events_p2005_03', n: 1000 },
      { part: 'score_events_p2026_07', n: 1000 },
      { part: 'score_events_p2026_08', n: 1000 },
    ]);
    expect(await attachedPartitions(db)).toContain('score_events_default');

    // A migrated key is still known: posted again it is a duplicate, and new ids continue.
    const { rows: rev } = await sql<{ revision: number }>`SELECT revision FROM boards WHERE id = 'old'`.execute(db);
    const replay = {
      ord: 0, key: 'mig-3', boardId: 'old', periodKey: 'all', startsAt: new Date('2000-01-01T00:00:00Z'), endsAt: null,
      memberId: 'm3', category: null, value: '3', occurredAt: new Date('2005-03-31T23:59:59Z'), receivedAt: new Date(),
      source: null, payloadHash: 'h3', metadata: null, payload: {}, preReason: null,
    };
    const fresh = { ...replay, ord: 1, key: 'mig-new', payloadHash: 'new', occurredAt: new Date('2026-08-20T00:00:00Z') };
    const out = await applyBatch(db as never, [replay, fresh], [{ id: 'old', revision: rev[0]!.revision }], new Date());
    expect(out.stale).toBeUndefined();
    expect(out.stale === undefined && out.results.map((r) => [r.key, r.outcome])).toEqual([['mig-3', 'duplicate'], ['mig-new', 'applied']]);
    const id = await sql<{ id: number }>`SELECT id::int FROM score_events WHERE idempotency_key = 'mig-new'`.execute(db);
    expect(id.rows[0]!.id).toBeGreaterThan(before.rows[0]!.max);
    // The ledger still refers to its periods.
    await expect(
      sql`INSERT INTO score_events (idempotency_key, board_id, period_key, member_id, value, occurred_at, received_at, applied_at, payload_hash)
          VALUES ('orphan', 'old', 'nope', 'm', 1, now(), now(), now(), 'x')`.execute(db),
    ).rejects.toThrow(/foreign key/);
  });
});

describe('the partitioned ledger in service', () => {
  let h: Harness;
  let outDir: string;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
    outDir = await mkdtemp(path.join(tmpdir(), 'laurel-archive-'));
    expect((await h.api('PUT', '/v1/boards/forever', { aggregation: 'sum', period: 'all' })).status).toBe(201);
    expect((await h.api('PUT', '/v1/boards/monthly', { aggregation: 'best', period: 'month', graceSeconds: 0 })).status).toBe(201);
  });
  afterAll(async () => {
    await h.close();
    await rm(outDir, { recursive: true, force: true });
  });

  function job(events: ScoreEventInput[], receivedAt = h.clock.now()): ScoreJob {
    return { events: events.map((posted) => ({ posted, receivedAt: receivedAt.toISOString(), payloadHash: payloadHash(posted) })) };
  }

  async function apply(events: ScoreEventInput[]) {
    const out = await processScoreJob(h.ctx, { ...job(events), wantResults: true });
    return out.results!.map((r) => (r.status === 'rejected' ? `rejected:${r.reason}` : r.status));
  }

  async function ledgerCount(key: string) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM score_events WHERE idempotency_key = ${key}`.execute(h.ctx.db);
    return rows[0]!.n;
  }

  it('keeps idempotency global across monthly partitions', async () => {
    const first = { board: 'forever', member: 'idem', value: 5, idempotencyKey: 'x-month-1', occurredAt: '2026-10-15T10:00:00Z' };
    expect(await apply([first])).toEqual(['applied']);
    // The same event again: a duplicate. The same key stamped in another month (so in
    // another partition): still caught, as a conflict with the stored event.
    expect(await apply([first])).toEqual(['duplicate']);
    expect(await apply([{ ...first, occurredAt: '2026-11-20T10:00:00Z' }])).toEqual(['rejected:conflict']);
    expect(await apply([{ ...first, occurredAt: '2025-01-02T10:00:00Z' }])).toEqual(['rejected:conflict']);
    expect(await ledgerCount('x-month-1')).toBe(1);
    expect(await h.api('GET', '/v1/events/x-month-1')).toMatchObject({ status: 200, body: { status: 'applied', value: 5 } });
    expect((await h.api('GET', '/v1/boards/forever/standings/idem?period=all')).body).toMatchObject({ score: 5 });
  });

  it('accepts an event of a month that has no partition, then the tick gives the month its partition', async () => {
    h.clock.set('2026-12-02T12:00:00Z');
    const old = { board: 'forever', member: 'old', value: 7, idempotencyKey: 'no-part-1', occurredAt: '2009-05-06T07:08:09Z' };
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
          board: 'forever', member: `race${k % 7}`, value: 1, idempotencyKey: `race-${i}-${j}-${k}`, occurredAt: `${m}-${String(10 + j).padStart(2, '0')}T00:00:00Z`,
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
      SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM score_events WHERE idempotency_key LIKE 'race-%' GROUP BY 1 ORDER BY 1`.execute(h.ctx.db);
    expect(rows).toEqual(months.map((m) => ({ part: `score_events_p${m.replace('-', '_')}`, n: 150 })));
    const total = await sql<{ v: number }>`
      SELECT sum(value)::int AS v FROM member_aggregates WHERE board_id = 'forever' AND period_key = 'all' AND category = 'all' AND member_id LIKE 'race%'`.execute(h.ctx.db);
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
      board: 'monthly', member: e.member, value: e.units, idempotencyKey: e.key, occurredAt: new Date(e.atMs).toISOString(),
    }));
    expect(new Set(await apply(posted))).toEqual(new Set(['applied']));
    expect(await apply([{ board: 'forever', member: 'aug', value: 1, idempotencyKey: 'aug-1', occurredAt: '2026-08-31T23:00:00Z' }])).toEqual(['applied']);
    h.clock.set('2026-10-05T00:00:00Z');
    await runTick(h.ctx);
    const period = await sql<{ state: string }>`SELECT state FROM periods WHERE board_id = 'monthly' AND key = '2026-09'`.execute(h.ctx.db);
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
    expect(names).toEqual(expect.arrayContaining(['score_events_p2026_08', 'score_events_p2026_10', 'score_events_default']));
    const kept = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger_archive.score_events_p2026_09`.execute(h.ctx.db);
    expect(kept.rows[0]!.n).toBe(40);
    expect(await readdir(outDir)).toEqual(['score_events_2026-09.csv.gz']);
    // The file holds every member's events: readable by its owner only, whatever the umask.
    expect((await stat(path.join(outDir, 'score_events_2026-09.csv.gz'))).mode & 0o777).toBe(0o600);
    const csv = gunzipSync(await readFile(path.join(outDir, 'score_events_2026-09.csv.gz'))).toString('utf8').trim().split('\n');
    expect(csv[0]).toMatch(/^id,idempotency_key,board_id,period_key,member_id/);
    expect(csv.slice(1).map((l) => l.split(',')[1]).sort()).toEqual(events.map((e) => e.key).sort());

    // The closed period keeps its final results, equal to an independent reference.
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'first' });
    const results = await h.api('GET', '/v1/boards/monthly/periods/2026-09/results?limit=100');
    expect(results.status).toBe(200);
    expect(results.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(expected.map((e) => [e.rank, e.member, e.units]));
    // Its keys are still known; its events cannot be recounted from a ledger that lost them.
    expect(await apply([posted[0]!])).toEqual(['duplicate']);
    const status = await h.api('GET', '/v1/events/sep-0');
    expect(status.status).toBe(404);
    expect(status.body.message).toMatch(/archived with the ledger of 2026-09/);
    await expect(recomputeAggregates(h.ctx.db, { board: 'monthly', period: '2026-09', member: null, category: null }, h.clock.now())).rejects.toThrow(
      /archived/,
    );
    const fromEvents = await h.api('POST', '/v1/admin/rebuilds', { board: 'monthly', period: '2026-09', fromEvents: true });
    expect(fromEvents).toMatchObject({ status: 409, body: { error: 'conflict', details: [{ path: 'fromEvents' }] } });
    // Rebuilding Redis from the stored aggregates still works, and verify finds it equal.
    await processScopeRebuild(h.ctx, { board: 'monthly', period: '2026-09', category: 'all', fromEvents: false, trigger: 'test' });
    expect(await verifyLeaderboards(h.ctx, { board: 'monthly', period: '2026-09' })).toEqual({ scopes: 1, differences: [] });
    const rebuild = await sql<{ value: number; n: number }>`
      SELECT max(value)::int AS value, count(*)::int AS n FROM member_aggregates WHERE board_id = 'monthly' AND period_key = '2026-09' AND category = 'all'`.execute(h.ctx.db);
    expect(rebuild.rows[0]).toEqual({ value: expected[0]!.units, n: 12 });

    // Again, now dropping: the file is already written, the table goes, nothing else moves.
    const second = await archiveLedger(h.ctx, { before: '2026-10', outDir, drop: true });
    expect(second.archived.map((a) => [a.month, a.events, a.dropped])).toEqual([['2026-09', 40, true]]);
    const gone = await sql<{ t: string | null }>`SELECT to_regclass('ledger_archive.score_events_p2026_09')::text AS t`.execute(h.ctx.db);
    expect(gone.rows[0]!.t).toBeNull();
    expect(await readdir(outDir)).toEqual(['score_events_2026-09.csv.gz']);
    const third = await archiveLedger(h.ctx, { before: '2026-10', outDir, drop: true });
    expect(third.archived).toEqual([]);
    expect(third.refused.map((r) => r.month)).toEqual(refused);
    expect(await ledgerCount('aug-1')).toBe(1);
  });
});
