import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, envForChild, type Harness } from '../support/harness.js';
import { startLaurel, waitForHttp, type LaurelProcess } from '../support/laurel-process.js';
import { freePort } from '../support/free-port.js';
import { countingProxy, type CountingProxy } from '../support/counting-tcp-proxy.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';
import { until } from '../support/poll.js';

/**
 * Across two real web processes: reads Redis can answer (top page, around,
 * following 200, the member across boards, a rank) make no Postgres round trip per request
 * (display names and follow lists come from each process's memory), and a rename or a new
 * follow list through one process is served by the other as soon as its notice arrives.
 */

let h: Harness;
const webs: Array<{ process: LaurelProcess; base: string; postgres: CountingProxy }> = [];
const MEMBERS = 250;
const name = (i: number) => `Player ${i}`;

beforeAll(async () => {
  h = await createHarness({ concurrency: 2 });
  h.clock.set(new Date());
});

/** Two web processes, each reaching Postgres through a proxy that counts what it sends. */
async function startWebs(): Promise<void> {
  const postgresPort = Number(new URL(h.env.DATABASE_URL).port || 5432);
  for (const label of ['web-a', 'web-b']) {
    const postgres = await countingProxy(postgresPort);
    const url = new URL(h.env.DATABASE_URL);
    url.port = String(postgres.port);
    const port = await freePort();
    const web = startLaurel(
      'web',
      { ...envForChild(h.env), DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'warn' },
      label,
    );
    webs.push({ process: web, base: `http://127.0.0.1:${port}`, postgres });
  }
  await Promise.all(webs.map((w) => waitForHttp(`${w.base}/readyz`)));
}
afterAll(async () => {
  for (const w of webs) {
    await w.process.stop();
    await w.postgres.stop();
  }
  await h.close();
});

async function get(base: string, path: string): Promise<any> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(res.status, path).toBe(200);
  return res.json();
}

async function put(base: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(base + path, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, path).toBe(200);
}

describe('reads Redis can answer, on two web processes', () => {
  it('make no Postgres round trip per request, and see a rename or follow change made through the other process', async () => {
    expect(
      (await h.api('PUT', '/v1/boards/rp', { aggregation: 'best', period: 'all', tieBreak: 'member' })).status,
    ).toBe(201);
    const at = Date.now() - 60_000;
    const events: RefEvent[] = Array.from({ length: MEMBERS }, (_, i) => ({
      key: `rp-${i}`,
      member: `rp${i}`,
      units: (i * 37) % 101,
      atMs: at,
    }));
    for (let i = 0; i < MEMBERS; i += 1)
      expect((await h.api('PUT', `/v1/members/rp${i}`, { displayName: name(i) })).status).toBe(200);
    const me = 'rp0';
    const followed = Array.from({ length: 200 }, (_, i) => `rp${i + 1}`);
    expect((await h.api('PUT', `/v1/members/${me}/following`, { memberIds: followed })).status).toBe(200);
    await h.postEvents(
      events.map((e) => ({
        board: 'rp',
        member: e.member,
        value: e.units,
        idempotencyKey: e.key,
        occurredAt: new Date(e.atMs).toISOString(),
      })),
    );
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'member' });
    const group = referenceStandings(
      events.filter((e) => e.member === me || followed.includes(e.member)),
      { aggregation: 'best', order: 'desc', tieBreak: 'member' },
    );
    // Started once the members are written: no notice of that setup reaches them.
    await startWebs();

    const reads = [
      '/v1/boards/rp/standings?period=all&limit=50',
      `/v1/boards/rp/standings/rp7/around?period=all&radius=5`,
      `/v1/boards/rp/standings/${me}/following?period=all&limit=201`,
      `/v1/members/rp7/standings?period=all`,
      `/v1/boards/rp/standings/rp9?period=all`,
    ];
    const check = (answers: any[]) => {
      const [top, around, following, across, rank] = answers;
      expect(top.entries.map((e: any) => [e.rank, e.member, e.displayName, e.score])).toEqual(
        expected.slice(0, 50).map((e) => [e.rank, e.member, name(Number(e.member.slice(2))), e.units]),
      );
      const at7 = expected.findIndex((e) => e.member === 'rp7');
      expect(around.entries.map((e: any) => [e.rank, e.member, e.displayName])).toEqual(
        expected.slice(Math.max(0, at7 - 5), at7 + 6).map((e) => [e.rank, e.member, name(Number(e.member.slice(2)))]),
      );
      expect(following).toMatchObject({ following: 200, total: group.length });
      expect(following.entries.map((e: any) => [e.rank, e.member])).toEqual(group.map((e) => [e.rank, e.member]));
      expect(across.standings).toEqual([
        expect.objectContaining({ board: 'rp', rank: expected[at7]!.rank, source: 'cache' }),
      ]);
      expect(rank).toMatchObject({
        source: 'cache',
        rank: expected.find((e) => e.member === 'rp9')!.rank,
        total: MEMBERS,
      });
    };

    // The first reads fill each process's caches (names once per batch, the follow list
    // once), as soon as its change notices are live; from then on a round of reads is served
    // without Postgres.
    for (const w of webs) {
      await until(`${w.process.name} serving from memory`, async () => {
        const writes = w.postgres.writes;
        check(await Promise.all(reads.map((path) => get(w.base, path))));
        return w.postgres.writes === writes ? true : undefined;
      });
    }
    const rounds = 20;
    for (const w of webs) {
      const before = w.postgres.writes;
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: rounds }, () => Promise.all(reads.map((path) => get(w.base, path)))),
      );
      const seconds = (Date.now() - started) / 1000;
      for (const a of answers) check(a);
      // What remains are the board row (re-read at most every 2 s) and the period row (every
      // 1 s): a number bound by the time the rounds took, not by the requests. A round trip
      // per request would be 100 at least.
      const spent = w.postgres.writes - before;
      expect(spent, `${w.process.name}: ${spent} round trips in ${seconds} s`).toBeLessThanOrEqual(
        2 * (Math.ceil(seconds) + 1),
      );
      expect(spent, w.process.name).toBeLessThan(rounds * reads.length);
    }

    // A rename and a new follow list through process A: A serves them at once, B as soon as the notice reaches it.
    const [a, b] = webs as [(typeof webs)[0], (typeof webs)[0]];
    const top = expected[0]!.member;
    await put(a.base, `/v1/members/${top}`, { displayName: 'Renamed Champion' });
    await put(a.base, `/v1/members/${me}/following`, { memberIds: [top] });
    const fromA = await get(a.base, '/v1/boards/rp/standings?period=all&limit=1');
    expect(fromA.entries[0]).toMatchObject({ member: top, displayName: 'Renamed Champion' });
    expect((await get(a.base, `/v1/boards/rp/standings/${me}/following?period=all`)).following).toBe(1);
    const fromB = await until('the rename in process B', async () => {
      const page = await get(b.base, '/v1/boards/rp/standings?period=all&limit=1');
      return page.entries[0].displayName === 'Renamed Champion' ? page : undefined;
    });
    expect(fromB.entries[0]).toMatchObject({ member: top, displayName: 'Renamed Champion' });
    const followingB = await until('the new follow list in process B', async () => {
      const body = await get(b.base, `/v1/boards/rp/standings/${me}/following?period=all`);
      return body.following === 1 ? body : undefined;
    });
    const pair = referenceStandings(
      events.filter((e) => e.member === me || e.member === top),
      { aggregation: 'best', order: 'desc', tieBreak: 'member' },
    );
    expect(followingB.entries.map((e: any) => [e.rank, e.member])).toEqual(pair.map((e) => [e.rank, e.member]));
  });
});
