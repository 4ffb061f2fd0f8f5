import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';

const NOW = new Date('2026-12-02T12:00:00Z');
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ concurrency: 4 });
  h.clock.set(NOW);
});
afterAll(() => h.close());

async function standings(board: string, query = '') {
  const res = await h.api('GET', `/v1/boards/${board}/standings?limit=200${query}`);
  expect(res.status).toBe(200);
  return { total: res.body.total as number, entries: res.body.entries.map((e: any) => [e.rank, e.member, e.score]) };
}

function expectedOf(
  events: RefEvent[],
  board: {
    aggregation: 'best' | 'sum' | 'last';
    order: 'desc' | 'asc';
    tieBreak: 'first' | 'last' | 'member' | 'shared';
  },
) {
  const ranked = referenceStandings(events, board);
  return { total: ranked.length, entries: ranked.map((s) => [s.rank, s.member, s.units]) };
}

async function post(board: string, events: RefEvent[]) {
  return h.postEvents(
    events.map((e) => ({
      board,
      member: e.member,
      value: e.units,
      idempotencyKey: e.key,
      occurredAt: new Date(e.atMs).toISOString(),
    })),
  );
}

const at = (minutes: number) => NOW.getTime() - 3_600_000 + minutes * 60_000;

describe('member profiles and regions', () => {
  it('moves a member between region scopes of open periods, never in two regions or none', async () => {
    await h.api('PUT', '/v1/boards/geo', { aggregation: 'sum', regions: true, categories: ['kills'] });
    for (const [member, region] of [
      ['fr1', 'FR'],
      ['fr2', 'FR'],
      ['de1', 'DE'],
    ] as const) {
      const res = await h.api('PUT', `/v1/members/${member}`, { region, displayName: member.toUpperCase() });
      expect(res).toMatchObject({
        status: 200,
        body: { member, region, displayName: member.toUpperCase(), excluded: false },
      });
    }
    await h.api('POST', '/v1/events?wait=true', {
      events: [
        { board: 'geo', member: 'fr1', value: 10, idempotencyKey: 'geo-1', category: 'kills' },
        { board: 'geo', member: 'fr2', value: 5, idempotencyKey: 'geo-2' },
        { board: 'geo', member: 'de1', value: 7, idempotencyKey: 'geo-3', category: 'kills' },
      ],
    });
    expect((await standings('geo', '&region=FR')).entries).toEqual([
      [1, 'fr1', 10],
      [2, 'fr2', 5],
    ]);

    const moved = await h.api('PUT', '/v1/members/fr1', { region: 'DE' });
    expect(moved.body.region).toBe('DE');
    expect((await standings('geo', '&region=FR')).entries).toEqual([[1, 'fr2', 5]]);
    expect((await standings('geo', '&region=DE')).entries).toEqual([
      [1, 'fr1', 10],
      [2, 'de1', 7],
    ]);
    expect((await standings('geo', '&region=DE&category=kills')).entries).toEqual([
      [1, 'fr1', 10],
      [2, 'de1', 7],
    ]);
    expect((await standings('geo', '&region=FR&category=kills')).entries).toEqual([]);
    expect((await standings('geo')).entries).toEqual([
      [1, 'fr1', 10],
      [2, 'de1', 7],
      [3, 'fr2', 5],
    ]);
    // Later events follow the new region.
    await h.api('POST', '/v1/events?wait=true', { board: 'geo', member: 'fr1', value: 1, idempotencyKey: 'geo-4' });
    expect((await standings('geo', '&region=DE')).entries).toEqual([
      [1, 'fr1', 11],
      [2, 'de1', 7],
    ]);
    expect((await standings('geo', '&region=FR')).entries).toEqual([[1, 'fr2', 5]]);
    // Clearing the region leaves the member in the world scope only.
    await h.api('PUT', '/v1/members/fr1', { region: null });
    expect((await standings('geo', '&region=DE')).entries).toEqual([[1, 'de1', 7]]);
    expect((await standings('geo')).total).toBe(3);
    const names = (await h.api('GET', '/v1/boards/geo/standings')).body.entries.map((e: any) => e.displayName);
    expect(names).toEqual(['FR1', 'DE1', 'FR2']);
  });

  it('validates profile fields', async () => {
    expect((await h.api('PUT', '/v1/members/x1', { region: 'world' })).status).toBe(400);
    expect((await h.api('PUT', '/v1/members/x1', { region: 'no spaces' })).status).toBe(400);
    expect((await h.api('PUT', '/v1/members/x1', { nickname: 'a' })).status).toBe(400);
    expect((await h.api('PUT', '/v1/members/bad%20id', { region: 'FR' })).status).toBe(400);
    expect(
      (await h.api('PUT', '/v1/members/x1/following', { memberIds: Array.from({ length: 1001 }, (_, i) => `f${i}`) }))
        .status,
    ).toBe(400);
  });
});

describe('exclusion and restore', () => {
  it('hides an excluded member everywhere at once, keeps accumulating, and restores all points', async () => {
    const board = { aggregation: 'sum', order: 'desc', tieBreak: 'member' } as const;
    await h.api('PUT', '/v1/boards/cheat', { aggregation: 'sum', tieBreak: 'member' });
    const honest: RefEvent[] = Array.from({ length: 30 }, (_, i) => ({
      key: `ch-h${i}`,
      member: `h${i % 6}`,
      units: (i * 7) % 13,
      atMs: at(i),
    }));
    await post('cheat', honest);
    const burst: RefEvent[] = Array.from({ length: 200 }, (_, i) => ({
      key: `ch-c${i}`,
      member: 'cheater',
      units: 50,
      atMs: at(i % 59),
    }));
    await post('cheat', burst.slice(0, 20));
    expect(await standings('cheat')).toEqual(expectedOf([...honest, ...burst.slice(0, 20)], board));

    // The exclusion lands in the middle of a burst of the cheater's own events.
    const sending = (async () => {
      for (let i = 20; i < 200; i += 20) {
        const res = await h.api('POST', '/v1/events', {
          events: burst.slice(i, i + 20).map((e) => ({
            board: 'cheat',
            member: e.member,
            value: e.units,
            idempotencyKey: e.key,
            occurredAt: new Date(e.atMs).toISOString(),
          })),
        });
        expect(res.status).toBe(202);
      }
    })();
    await new Promise((r) => setTimeout(r, 30));
    const excluded = await h.api('POST', '/v1/members/cheater/exclusion', { reason: 'speed hack' });
    expect(excluded).toMatchObject({ status: 200, body: { member: 'cheater', excluded: true } });
    await sending;
    await h.drain();

    expect(await standings('cheat')).toEqual(expectedOf(honest, board));
    expect((await h.api('GET', '/v1/boards/cheat/standings/cheater')).body).toMatchObject({ rank: null, total: 6 });
    const stored = await h.ctx.db
      .selectFrom('member_aggregates')
      .selectAll()
      .where('member_id', '=', 'cheater')
      .where('category', '=', 'all')
      .executeTakeFirstOrThrow();
    expect(stored.value).toBe(200 * 50);
    const profile = await h.api('GET', '/v1/members/cheater');
    expect(profile.body.exclusions).toEqual([
      {
        reason: 'speed hack',
        excludedBy: 'admin (ADMIN_API_KEY)',
        excludedAt: NOW.toISOString(),
        restoredBy: null,
        restoredAt: null,
        restoreReason: null,
      },
    ]);

    const restored = await h.api('DELETE', '/v1/members/cheater/exclusion');
    expect(restored.body.excluded).toBe(false);
    expect(await standings('cheat')).toEqual(expectedOf([...honest, ...burst], board));
    expect((await h.api('GET', '/v1/members/cheater')).body.exclusions[0]).toMatchObject({
      restoredBy: 'admin (ADMIN_API_KEY)',
      restoreReason: null,
    });
    // Exclusion needs the admin role and an existing member.
    expect((await h.api('POST', '/v1/members/nobody/exclusion', { reason: 'x' })).status).toBe(404);
    expect((await h.api('POST', '/v1/members/cheater/exclusion', {})).status).toBe(400);
  });
});

describe('restore with a reason', () => {
  it('keeps the reason with the exclusion it ends; a bad reason is a 400 naming it and restores nothing', async () => {
    await h.api('PUT', '/v1/members/appealed', { displayName: 'Appealed' });
    expect((await h.api('POST', '/v1/members/appealed/exclusion', { reason: 'suspected bot' })).status).toBe(200);
    for (const [body, path] of [
      [{ reason: '' }, 'reason'],
      [{ reason: 'x'.repeat(501) }, 'reason'],
      [{ reason: 42 }, 'reason'],
      [{ reason: 'fine', why: 'extra' }, ''],
    ] as const) {
      const refused = await h.api('DELETE', '/v1/members/appealed/exclusion', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('validation_failed');
      expect(refused.body.details.map((d: any) => d.path).join(' '), JSON.stringify(body)).toContain(path);
      expect((await h.api('GET', '/v1/members/appealed')).body.excluded).toBe(true);
    }
    const restored = await h.api('DELETE', '/v1/members/appealed/exclusion', {
      reason: '  appeal upheld: a human player  ',
    });
    expect(restored).toMatchObject({ status: 200, body: { member: 'appealed', excluded: false } });
    // A second exclusion, restored without a reason (no body at all).
    expect((await h.api('POST', '/v1/members/appealed/exclusion', { reason: 'again' })).status).toBe(200);
    expect((await h.api('DELETE', '/v1/members/appealed/exclusion')).status).toBe(200);
    const history = (await h.api('GET', '/v1/members/appealed')).body.exclusions;
    expect(history.map((e: any) => [e.reason, e.restoreReason, e.restoredBy])).toEqual([
      ['suspected bot', 'appeal upheld: a human player', 'admin (ADMIN_API_KEY)'],
      ['again', null, 'admin (ADMIN_API_KEY)'],
    ]);
  });
});

describe('voids', () => {
  it('recomputes a best score when the event that set it is voided', async () => {
    const board = { aggregation: 'best', order: 'desc', tieBreak: 'first' } as const;
    await h.api('PUT', '/v1/boards/bestv', { aggregation: 'best', tieBreak: 'first' });
    const events: RefEvent[] = [
      { key: 'bv-1', member: 'a', units: 10, atMs: at(1) },
      { key: 'bv-2', member: 'a', units: 50, atMs: at(2) },
      { key: 'bv-3', member: 'a', units: 30, atMs: at(3) },
      { key: 'bv-4', member: 'b', units: 30, atMs: at(5) },
      { key: 'bv-5', member: 'c', units: 40, atMs: at(4) },
    ];
    await post('bestv', events);
    expect(await standings('bestv')).toEqual(expectedOf(events, board));

    const res = await h.api('POST', '/v1/events/bv-2/void', { reason: 'impossible score' });
    expect(res).toMatchObject({ status: 200, body: { idempotencyKey: 'bv-2', status: 'voided' } });
    const remaining = events.filter((e) => e.key !== 'bv-2');
    // a now has 30 reached at minute 3, ahead of b's 30 reached at minute 5.
    expect(await standings('bestv')).toEqual(expectedOf(remaining, board));
    expect((await h.api('GET', '/v1/events/bv-2')).body).toMatchObject({
      status: 'voided',
      voidReason: 'impossible score',
      period: '2026-12',
      score: 30,
    });
    // Voiding again changes nothing.
    expect((await h.api('POST', '/v1/events/bv-2/void', { reason: 'again' })).status).toBe(200);
    expect(await standings('bestv')).toEqual(expectedOf(remaining, board));
    // A new, better event still counts normally after the void.
    await post('bestv', [{ key: 'bv-6', member: 'a', units: 45, atMs: at(6) }]);
    expect(await standings('bestv')).toEqual(
      expectedOf([...remaining, { key: 'bv-6', member: 'a', units: 45, atMs: at(6) }], board),
    );
  });

  it('recomputes last and sum, and removes a member whose every event is voided', async () => {
    await h.api('PUT', '/v1/boards/lastv', { aggregation: 'last', tieBreak: 'member' });
    const events: RefEvent[] = [
      { key: 'lv-1', member: 'a', units: 1, atMs: at(1) },
      { key: 'lv-2', member: 'a', units: 9, atMs: at(2) },
      { key: 'lv-3', member: 'b', units: 5, atMs: at(1) },
    ];
    await post('lastv', events);
    await h.api('POST', '/v1/events/lv-2/void', { reason: 'x' });
    const board = { aggregation: 'last', order: 'desc', tieBreak: 'member' } as const;
    expect(await standings('lastv')).toEqual(expectedOf([events[0]!, events[2]!], board));
    await h.api('POST', '/v1/events/lv-3/void', { reason: 'x' });
    expect(await standings('lastv')).toEqual(expectedOf([events[0]!], board));
    expect((await h.api('GET', '/v1/boards/lastv/standings/b')).body).toMatchObject({ rank: null, total: 1 });
    // A new event brings b back with just that event.
    await post('lastv', [{ key: 'lv-4', member: 'b', units: 2, atMs: at(0) }]);
    expect(await standings('lastv')).toEqual(
      expectedOf([events[0]!, { key: 'lv-4', member: 'b', units: 2, atMs: at(0) }], board),
    );
    expect((await h.api('POST', '/v1/events/unknown-key/void', { reason: 'x' })).status).toBe(404);
  });

  it('keeps rejected events for audit with their payload and source', async () => {
    await h.api('PUT', '/v1/boards/audit', { aggregation: 'sum', period: 'day', graceSeconds: 0 });
    const res = await h.api('POST', '/v1/events?wait=true', {
      board: 'audit',
      member: 'a',
      value: 1,
      idempotencyKey: 'au-1',
      source: 'server-eu-3',
      occurredAt: '2026-11-30T10:00:00Z',
    });
    expect(res.body.results[0]).toMatchObject({ status: 'rejected', reason: 'period_closed' });
    const status = await h.api('GET', '/v1/events/au-1');
    expect(status.body).toMatchObject({
      status: 'rejected',
      reason: 'period_closed',
      period: '2026-11-30',
      source: 'server-eu-3',
      payload: {
        board: 'audit',
        member: 'a',
        value: 1,
        idempotencyKey: 'au-1',
        source: 'server-eu-3',
        occurredAt: '2026-11-30T10:00:00Z',
      },
    });
  });
});
