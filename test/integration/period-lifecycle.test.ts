import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../../src/storage/postgres/schema.js';
import { createHarness, type Harness } from '../support/harness.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';
import { closePeriod } from '../../src/services/period-closing.js';
import { runTick } from '../../src/services/period-tick.js';
import { registerSchedulers } from '../../src/queue/periods-queue.js';

const SECRET = 'webhook-secret-for-tests-0123';

interface Delivery {
  id: string;
  type: string;
  body: any;
  signatureOk: boolean;
}

/** A real webhook receiver on loopback: the first two requests fail, later ones succeed. */
function startReceiver(): Promise<{ server: Server; url: string; delivered: Delivery[]; attempts: () => number }> {
  const delivered: Delivery[] = [];
  let attempts = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      attempts += 1;
      if (attempts <= 2) {
        res.writeHead(500).end();
        return;
      }
      // Standard Webhooks, checked by hand: v1,<base64 HMAC-SHA256 of "id.timestamp.body">.
      const id = String(req.headers['webhook-id']);
      const timestamp = String(req.headers['webhook-timestamp']);
      const expected = `v1,${createHmac('sha256', SECRET).update(`${id}.${timestamp}.${raw}`).digest('base64')}`;
      delivered.push({
        id,
        type: String(req.headers['x-laurel-event']),
        body: JSON.parse(raw),
        signatureOk:
          req.headers['webhook-signature'] === expected && Math.abs(Date.now() / 1000 - Number(timestamp)) < 60,
      });
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
        delivered,
        attempts: () => attempts,
      }),
    ),
  );
}

let h: Harness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
  h = await createHarness({ env: { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET } });
});
afterAll(async () => {
  await h.close();
  await new Promise((r) => receiver.server.close(r));
});

async function periodState(board: string, key: string) {
  return (
    await h.ctx.db
      .selectFrom('periods')
      .select('state')
      .where('board_id', '=', board)
      .where('key', '=', key)
      .executeTakeFirst()
  )?.state;
}

describe('the period tick', () => {
  it('is registered as BullMQ job schedulers with stable ids, at most 60 s apart', async () => {
    await registerSchedulers(h.ctx.periodsQueue);
    await registerSchedulers(h.ctx.periodsQueue); // a second worker start replaces, never doubles
    const schedulers = await h.ctx.periodsQueue.getJobSchedulers();
    expect(schedulers.map((s) => s.key).sort()).toEqual(['period-tick', 'rollups']);
    expect(schedulers.find((s) => s.key === 'period-tick')!.every).toBeLessThanOrEqual(60_000);
    for (const s of schedulers) await h.ctx.periodsQueue.removeJobScheduler(s.key);
  });

  it('creates the current and the next period ahead of time, and reads see them empty and complete', async () => {
    h.clock.set('2026-12-20T12:00:00Z');
    await h.api('PUT', '/v1/boards/ahead', { aggregation: 'sum', period: 'week' });
    await runTick(h.ctx);
    const keys = (
      await h.ctx.db.selectFrom('periods').select('key').where('board_id', '=', 'ahead').orderBy('key').execute()
    ).map((p) => p.key);
    expect(keys).toEqual(['2026-W51', '2026-W52']);
    expect((await h.api('GET', '/v1/boards/ahead/standings')).body).toMatchObject({ total: 0, source: 'cache' });
  });

  it('accepts late events inside the grace window and rejects them after it, before and after the close', async () => {
    h.clock.set('2026-12-31T23:00:00Z');
    await h.api('PUT', '/v1/boards/grace', { aggregation: 'sum', graceSeconds: 600 });
    await h.postEvents([{ board: 'grace', member: 'a', value: 1, idempotencyKey: 'g-1' }]);
    h.clock.set('2027-01-01T00:05:00Z');
    expect(
      await h.postEvents([
        { board: 'grace', member: 'a', value: 2, idempotencyKey: 'g-2', occurredAt: '2026-12-31T23:59:00Z' },
      ]),
    ).toMatchObject([{ status: 'applied', period: '2026-12' }]);
    await runTick(h.ctx);
    expect(await periodState('grace', '2026-12')).toBe('open');
    h.clock.set('2027-01-01T00:10:01Z');
    // Past endsAt + grace: refused even though no tick has closed the period yet.
    expect(
      await h.postEvents([
        { board: 'grace', member: 'a', value: 4, idempotencyKey: 'g-3', occurredAt: '2026-12-31T23:59:30Z' },
      ]),
    ).toMatchObject([{ status: 'rejected', reason: 'period_closed' }]);
    expect((await runTick(h.ctx)).closed).toContain('grace/2026-12');
    expect(await periodState('grace', '2026-12')).toBe('closed');
    expect(
      await h.postEvents([
        { board: 'grace', member: 'a', value: 8, idempotencyKey: 'g-4', occurredAt: '2026-12-31T23:59:59Z' },
      ]),
    ).toMatchObject([{ status: 'rejected', reason: 'period_closed' }]);
    const results = await h.api('GET', '/v1/boards/grace/periods/2026-12/results');
    expect(results.body.entries).toEqual([{ rank: 1, member: 'a', displayName: null, score: 3 }]);
  });

  it('closes a month at local midnight: Europe/Paris an hour before UTC', async () => {
    h.clock.set('2026-12-31T12:00:00Z');
    for (const [id, timezone] of [
      ['m-paris', 'Europe/Paris'],
      ['m-utc', 'UTC'],
    ] as const) {
      await h.api('PUT', `/v1/boards/${id}`, { aggregation: 'best', timezone, graceSeconds: 0 });
      await h.postEvents([{ board: id, member: 'x', value: 5, idempotencyKey: `${id}-1` }]);
    }
    h.clock.set('2026-12-31T23:30:00Z'); // 00:30 on 1 January in Paris
    await runTick(h.ctx);
    expect(await periodState('m-paris', '2026-12')).toBe('closed');
    expect(await periodState('m-utc', '2026-12')).toBe('open');
    h.clock.set('2027-01-01T00:00:00Z');
    await runTick(h.ctx);
    expect(await periodState('m-utc', '2026-12')).toBe('closed');
  });

  it('two racing ticks close once; a crash mid-close is finished by the next tick', async () => {
    h.clock.set('2026-11-15T12:00:00Z');
    await h.api('PUT', '/v1/boards/race', { aggregation: 'sum', graceSeconds: 0 });
    await h.postEvents(
      Array.from({ length: 30 }, (_, i) => ({
        board: 'race',
        member: `r${i}`,
        value: i % 7,
        idempotencyKey: `race-${i}`,
      })),
    );
    await h.api('PUT', '/v1/boards/crash', { aggregation: 'sum', graceSeconds: 0 });
    await h.postEvents(
      Array.from({ length: 10 }, (_, i) => ({
        board: 'crash',
        member: `c${i}`,
        value: i,
        idempotencyKey: `crash-${i}`,
      })),
    );

    h.clock.set('2026-12-01T00:00:01Z');
    h.faults.midClose = (board) => {
      if (board === 'crash') throw new Error('injected crash mid-close');
    };
    const outcomes = await Promise.allSettled([runTick(h.ctx), runTick(h.ctx)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(await periodState('race', '2026-11')).toBe('closed');
    // The crash left the other period half closed: closing, and refusing events.
    expect(await periodState('crash', '2026-11')).toBe('closing');
    expect(
      await h.postEvents([
        { board: 'crash', member: 'c1', value: 1, idempotencyKey: 'crash-late', occurredAt: '2026-11-30T12:00:00Z' },
      ]),
    ).toMatchObject([{ status: 'rejected', reason: 'period_closed' }]);
    h.faults.midClose = undefined;
    await runTick(h.ctx);
    expect(await periodState('crash', '2026-11')).toBe('closed');
    for (const board of ['race', 'crash']) {
      const counts = await sql<{ results: number; reports: number }>`
        SELECT (SELECT count(*)::int FROM period_results WHERE board_id = ${board} AND period_key = '2026-11') AS results,
               (SELECT count(*)::int FROM notifications WHERE board_id = ${board} AND period_key = '2026-11') AS reports`.execute(
        h.ctx.db,
      );
      const members = board === 'race' ? 30 : 10;
      expect(counts.rows[0]).toEqual({ results: members, reports: members });
    }
    // Closing again creates nothing.
    expect(await closePeriod(h.ctx, (await h.ctx.boards.get('race'))!, '2026-11')).toBe(false);
  });
});

describe('final standings, awards and reports', () => {
  it('stores results identical to the last live standings, grants awards deterministically, reports in rank order', async () => {
    h.clock.set('2026-10-20T12:00:00Z');
    await h.api('PUT', '/v1/boards/final', {
      aggregation: 'best',
      tieBreak: 'shared',
      categories: ['duel'],
      regions: true,
      graceSeconds: 0,
      awards: { tiers: [1, 3], regionTiers: [1], followingTop1: true },
    });
    const regions: Record<string, string> = { p1: 'FR', p2: 'FR', p3: 'DE', p4: 'DE', p5: 'DE', p6: 'FR' };
    for (const [m, r] of Object.entries(regions))
      await h.api('PUT', `/v1/members/${m}`, { region: r, displayName: m.toUpperCase() });
    const at = Date.parse('2026-10-20T10:00:00Z');
    const events: RefEvent[] = [
      { key: 'f1', member: 'p1', units: 50, atMs: at },
      { key: 'f2', member: 'p2', units: 50, atMs: at, category: 'duel' },
      { key: 'f3', member: 'p3', units: 40, atMs: at },
      { key: 'f4', member: 'p4', units: 30, atMs: at, category: 'duel' },
      { key: 'f5', member: 'p5', units: 30, atMs: at },
      { key: 'f6', member: 'p6', units: 10, atMs: at, category: 'duel' },
    ];
    await h.postEvents(
      events.map((e) => ({
        board: 'final',
        member: e.member,
        value: e.units,
        idempotencyKey: e.key,
        ...(e.category ? { category: e.category } : {}),
      })),
    );
    await h.api('PUT', '/v1/members/p6/following', { memberIds: ['p4', 'ghost'] });
    await h.api('PUT', '/v1/members/p3/following', { memberIds: ['p5'] });
    await h.api('PUT', '/v1/members/p5/following', { memberIds: ['p4'] });

    const scopes = ['', '&category=duel', '&region=FR', '&region=DE', '&category=duel&region=DE'];
    const live = await Promise.all(
      scopes.map((q) => h.api('GET', `/v1/boards/final/standings?period=2026-10&limit=200${q}`)),
    );
    h.clock.set('2026-11-01T00:00:00Z');
    await runTick(h.ctx);
    for (const [i, q] of scopes.entries()) {
      const final = await h.api('GET', `/v1/boards/final/periods/2026-10/results?limit=200${q}`);
      expect(final.status).toBe(200);
      expect(final.body.entries).toEqual(live[i]!.body.entries);
      expect(final.body.total).toBe(live[i]!.body.total);
    }
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'shared' });
    expect(expected.map((e) => [e.member, e.rank])).toEqual([
      ['p1', 1],
      ['p2', 1],
      ['p3', 3],
      ['p4', 4],
      ['p5', 4],
      ['p6', 6],
    ]);

    const awards = await sql<{ a: string }>`
      SELECT member_id || ' ' || category || '/' || region || ' ' || award AS a FROM awards
       WHERE board_id = 'final' ORDER BY 1`.execute(h.ctx.db);
    expect(awards.rows.map((r) => r.a)).toEqual(
      [
        'p1 all/FR region_top1',
        'p1 all/world top1',
        'p2 all/FR region_top1',
        'p2 all/world top1',
        'p2 duel/world top1',
        'p3 all/DE region_top1',
        'p3 all/world top3',
        'p3 following_top1'.replace(' following', ' all/world following'),
        'p4 duel/world top3',
        'p5 all/world following_top1',
        'p6 duel/world top3',
      ].sort(),
    );
    const mine = await h.api('GET', '/v1/members/p3/awards');
    expect(mine.body.awards.map((a: any) => a.award).sort()).toEqual(['following_top1', 'region_top1', 'top3']);

    const reports = await sql<{ member_id: string; title: string; body: string; award: string | null }>`
      SELECT member_id, title, body, award FROM notifications WHERE board_id = 'final' ORDER BY id`.execute(h.ctx.db);
    expect(reports.rows).toEqual([
      { member_id: 'p1', title: 'October 2026 finished', body: 'You finished 1st', award: 'top1' },
      { member_id: 'p2', title: 'October 2026 finished', body: 'You finished 1st', award: 'top1' },
      { member_id: 'p3', title: 'October 2026 finished', body: 'You finished 3rd', award: 'top3' },
      { member_id: 'p4', title: 'October 2026 finished', body: 'You finished 4th', award: null },
      { member_id: 'p5', title: 'October 2026 finished', body: 'You finished 4th', award: 'following_top1' },
      { member_id: 'p6', title: 'October 2026 finished', body: 'You finished 6th', award: null },
    ]);
    const inbox = await h.api('GET', '/v1/members/p3/notifications');
    expect(inbox.body.notifications[0]).toMatchObject({
      kind: 'period_report',
      board: 'final',
      period: '2026-10',
      rank: 3,
      body: 'You finished 3rd',
    });
  });

  it('delivers signed webhooks at least once through a receiver that fails twice, with stable delivery ids', async () => {
    await h.drain();
    const deadline = Date.now() + 30_000;
    // Every closed period so far sent period.closed plus one report per ranked member.
    const expectedCount = (
      await sql<{ n: number }>`
      SELECT (SELECT count(*)::int FROM notifications) + (SELECT count(*)::int FROM periods WHERE state = 'closed') AS n`.execute(
        h.ctx.db,
      )
    ).rows[0]!.n;
    while (new Set(receiver.delivered.map((d) => d.id)).size < expectedCount && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(receiver.attempts()).toBeGreaterThanOrEqual(expectedCount + 2);
    expect(new Set(receiver.delivered.map((d) => d.id)).size).toBe(expectedCount);
    expect(receiver.delivered.every((d) => d.signatureOk)).toBe(true);
    const closed = receiver.delivered.find((d) => d.type === 'period.closed' && d.body.data.board === 'final')!;
    expect(closed.body).toMatchObject({
      type: 'period.closed',
      data: { period: { key: '2026-10', state: 'closed' }, rankedMembers: 6 },
    });
    // Periods no event reached close in bulk (one statement for all boards) and still send period.closed.
    const empty = receiver.delivered.find(
      (d) => d.type === 'period.closed' && d.body.data.board === 'ahead' && d.body.data.period.key === '2026-W51',
    )!;
    expect(empty.body.data).toMatchObject({
      period: {
        key: '2026-W51',
        startsAt: '2026-12-14T00:00:00.000Z',
        endsAt: '2026-12-21T00:00:00.000Z',
        state: 'closed',
      },
      rankedMembers: 0,
    });
    const report = receiver.delivered.find((d) => d.type === 'member.period_report' && d.body.data.member === 'p3')!;
    expect(report.body.data).toMatchObject({
      board: 'final',
      period: '2026-10',
      rank: 3,
      body: 'You finished 3rd',
      award: 'top3',
    });
    expect(report.id).toBe(report.body.id);
  });
});

describe('scale and rollups', () => {
  it('closes a 50,000-member period with set-based SQL: a fixed number of statements', async () => {
    h.clock.set('2026-09-10T12:00:00Z');
    await h.api('PUT', '/v1/boards/fifty', { aggregation: 'sum', graceSeconds: 0, tieBreak: 'member' });
    await sql`INSERT INTO periods (board_id, key, starts_at, ends_at) VALUES ('fifty', '2026-09', '2026-09-01T00:00:00Z', '2026-10-01T00:00:00Z')`.execute(
      h.ctx.db,
    );
    await sql`INSERT INTO members (id) SELECT 'z' || lpad(g::text, 5, '0') FROM generate_series(1, 50000) g ON CONFLICT DO NOTHING`.execute(
      h.ctx.db,
    );
    await sql`
      INSERT INTO member_aggregates (board_id, period_key, category, member_id, value, reached_at, last_key, event_count)
      SELECT 'fifty', '2026-09', 'all', 'z' || lpad(g::text, 5, '0'), (g * 7919) % 1000, '2026-09-10T10:00:00Z', 'k' || g, 1
        FROM generate_series(1, 50000) g`.execute(h.ctx.db);
    h.clock.set('2026-10-01T00:00:00Z');
    // Count the statements the close sends: set-based SQL means a fixed number, plus one
    // page of webhook reports per 1000 members, never one statement per member.
    let statements = 0;
    const counting = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: h.ctx.postgres.pool }),
      log: (event) => {
        if (event.level === 'query') statements += 1;
      },
    });
    expect(await closePeriod({ ...h.ctx, db: counting }, (await h.ctx.boards.get('fifty'))!, '2026-09')).toBe(true);
    expect(statements).toBeLessThan(20 + 50_000 / 1000 + 5);
    const { rows } = await sql<{ results: number; reports: number; first: string; last: string }>`
      SELECT (SELECT count(*)::int FROM period_results WHERE board_id = 'fifty') AS results,
             (SELECT count(*)::int FROM notifications WHERE board_id = 'fifty') AS reports,
             (SELECT member_id FROM notifications WHERE board_id = 'fifty' ORDER BY id LIMIT 1) AS first,
             (SELECT member_id FROM period_results WHERE board_id = 'fifty' AND position = 1) AS last`.execute(
      h.ctx.db,
    );
    expect(rows[0]).toMatchObject({ results: 50000, reports: 50000 });
    expect(rows[0]!.first).toBe(rows[0]!.last);
  }, 180000);
});
