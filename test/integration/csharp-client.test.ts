import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCsharp, CSHARP_DIR, runCsharp } from '../support/csharp.js';
import { freePort } from '../support/free-port.js';
import { createHarness, type Harness } from '../support/harness.js';
import {
  referenceCutoffs,
  referenceGoals,
  referenceStandings,
  wireEvent,
  type RefEvent,
  type RefGoal,
  type RefStanding,
} from '../support/reference.js';

/**
 * The C# client (clients/csharp/) against a live Laurel: the library and its test program are
 * compiled with Mono's mcs and run with mono; the program makes every call a game server or
 * game client makes and reports what each answered or threw, with the client's own property
 * names (PascalCase). Every expectation here comes from the reference model or from the plan,
 * never from the client.
 */

const PLAYER_TOKEN_SECRET = 'player-token-secret-for-csharp-tests-0123';
const BOARD = 'cs-arena';
const RULES = { aggregation: 'sum', order: 'desc', tieBreak: 'first', subscore: null } as const;
const AWARD_TIERS = [1, 3, 5];
const DECIMALS = 2;
const PROFILES: Array<{ member: string; displayName: string | null; region: string }> = [
  { member: 'ana', displayName: 'Ana', region: 'FR' },
  { member: 'bo', displayName: 'Bo', region: 'DE' },
  { member: 'cy', displayName: null, region: 'FR' },
  { member: 'dee', displayName: 'Dee', region: 'DE' },
  { member: 'eli', displayName: 'Eli', region: 'FR' },
  { member: 'fay', displayName: 'Fay', region: 'DE' },
  { member: 'gus', displayName: 'Gus', region: 'FR' },
  { member: 'hal', displayName: 'Hal', region: 'DE' },
];
const FOLLOWER = 'cy';
const FOLLOWED = ['ana', 'bo', 'gus', 'ghost'];
/** Each member at most once per waited batch, so each result names one member's state. bo and ana end level. */
const ROWS: Array<Array<[member: string, units: number, category: string]>> = [
  [
    ['ana', 1250, 'duel'],
    ['bo', 1000, 'ffa'],
    ['cy', 500, 'duel'],
    ['dee', 2000, 'ffa'],
    ['eli', 125, 'duel'],
    ['fay', 700, 'ffa'],
    ['gus', 300, 'duel'],
    ['hal', 1500, 'duel'],
  ],
  [
    ['ana', 375, 'ffa'],
    ['bo', 825, 'duel'],
    ['cy', 250, 'ffa'],
    ['eli', 125, 'duel'],
    ['fay', 100, 'ffa'],
    ['hal', -200, 'ffa'],
  ],
  [
    ['ana', 200, 'duel'],
    ['cy', 50, 'duel'],
    ['fay', 25, 'duel'],
  ],
];
/** Whole seconds, a minute apart, two hours ago: reached times order the tie under `first`. */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 2 * 3600_000;
const BATCHES: RefEvent[][] = (() => {
  let minute = 0;
  return ROWS.map((rows, b) =>
    rows.map(([member, units, category]) => ({
      key: `cs-${b}-${member}`,
      member,
      units,
      atMs: T0 + (minute += 1) * 60_000,
      category,
    })),
  );
})();
const ALL_EVENTS = BATCHES.flat();
/** ana's last event carries metadata (the program adds the same map to events marked so). */
const WITH_METADATA = 'cs-2-ana';
const METADATA = { map: 'dust', kills: 7, ranked: true, ratio: 1.5, note: null };

const score = (units: number) => units / 10 ** DECIMALS;
const displayName = (member: string) => PROFILES.find((p) => p.member === member)?.displayName ?? null;
const regionOf = (member: string) => PROFILES.find((p) => p.member === member)?.region;
const planEvent = (e: RefEvent) => ({ ...wireEvent(BOARD, e, DECIMALS), withMetadata: e.key === WITH_METADATA });
/** A standings entry as the client reads it. */
const entry = (s: RefStanding) => ({
  Rank: s.rank,
  Member: s.member,
  DisplayName: displayName(s.member),
  Score: score(s.units),
  Subscore: null,
});
const goal = (g: RefGoal & { award?: string }) => ({
  Member: g.award ? null : g.member,
  Award: g.award ?? null,
  Zone: null,
  Rank: g.rank,
  Score: score(g.units),
  Needed: score(g.needed),
  Gap: g.gap === null ? null : score(g.gap),
});

const standings = (events: readonly RefEvent[], category?: string) => referenceStandings(events, RULES, category);
const FINAL = standings(ALL_EVENTS);
const placed = (member: string, ranked = FINAL) => ranked.find((s) => s.member === member);

interface Logged {
  method: string;
  url: string;
  body: string;
  status: number | null;
  retryAfter: number | null;
  at: number;
}

/**
 * A recording HTTP proxy in front of a Laurel: it answers the first `failures` POSTs to
 * /v1/events itself with a 503 and forwards everything else, logging each request with the
 * status it got. With `failures` 0 it only records: what Laurel itself answered.
 */
async function recordingProxy(target: string, failures: number) {
  const log: Logged[] = [];
  let failed = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const logged: Logged = {
        method: req.method ?? '',
        url: req.url ?? '',
        body,
        status: null,
        retryAfter: null,
        at: Date.now(),
      };
      log.push(logged);
      if (req.method === 'POST' && req.url?.startsWith('/v1/events') && failed < failures) {
        failed += 1;
        logged.status = 503;
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":"unavailable","message":"the proxy is failing on purpose"}');
        return;
      }
      fetch(new URL(req.url ?? '/', target), {
        method: req.method,
        headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
        body: body || undefined,
      }).then(
        async (answer) => {
          logged.status = answer.status;
          const retryAfter = answer.headers.get('retry-after');
          logged.retryAfter = retryAfter === null ? null : Number(retryAfter);
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (retryAfter !== null) headers['retry-after'] = retryAfter;
          res.writeHead(answer.status, headers).end(await answer.text());
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  return { ...(await listen(server)), log };
}

/** A server that reads requests and never answers, recording them. */
async function silentServer() {
  const log: Array<{ method: string; url: string; body: string }> = [];
  const server = createServer((req) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => log.push({ method: req.method ?? '', url: req.url ?? '', body }));
  });
  return { ...(await listen(server)), log };
}

async function listen(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const closeServer = (server: Server) => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
};

async function createKey(h: Harness, role: 'ingest' | 'read'): Promise<string> {
  const res = await h.api('POST', '/v1/admin/keys', { name: `csharp-${role}`, role });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key;
}

/** A read on the rate-limited Laurel: waits out its own budget when it has to. */
async function patientGet(h: Harness, path: string) {
  for (let attempt = 0; ; attempt += 1) {
    const res = await h.api('GET', path);
    if (res.status !== 429 || attempt === 3) return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

const LIMITED_EVENTS: RefEvent[] = [3, 1, 4, 2].map((units, i) => ({
  key: `cs-limited-${i}`,
  member: `lim-${i}`,
  units,
  atMs: T0 + i * 1000,
}));

/** What start() opened, closed after the tests in reverse order. */
const cleanup: Array<() => Promise<unknown>> = [];

/**
 * Compiles the C# client and its test program, starts three Laurels (one with Player tokens,
 * one with a tiny per-key rate limit, one without workers), the proxies and servers the
 * failures need, and runs the program once with a plan of every call.
 */
async function start() {
  const build = await buildCsharp();
  cleanup.push(() => build.remove());
  const h = await createHarness({ env: { PLAYER_TOKEN_SECRET } });
  cleanup.push(() => h.close());
  // Two requests per key and 2 s: the third event post meets Laurel's own 429 and Retry-After.
  const limited = await createHarness({ env: { RATE_LIMIT_PER_KEY: '2', RATE_LIMIT_WINDOW_SECONDS: '2' } });
  cleanup.push(() => limited.close());
  // No workers: a batch posted with ?wait=true is never applied within the wait.
  const idle = await createHarness({ workers: false });
  cleanup.push(() => idle.close());

  const board = {
    aggregation: RULES.aggregation,
    tieBreak: RULES.tieBreak,
    period: 'all',
    decimals: DECIMALS,
    categories: ['duel', 'ffa'],
    regions: true,
    awards: { tiers: AWARD_TIERS, regionTiers: [2], followingTop1: true },
  };
  expect((await h.api('PUT', `/v1/boards/${BOARD}`, board)).status).toBe(201);
  expect((await h.api('PUT', '/v1/boards/cs-retry', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  expect((await limited.api('PUT', '/v1/boards/cs-limited', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  const ingestKey = await createKey(h, 'ingest');
  const readKey = await createKey(h, 'read');
  const limitedKey = await createKey(limited, 'ingest');
  expect((await idle.api('PUT', '/v1/boards/cs-idle', { aggregation: 'best', period: 'all' })).status).toBe(201);
  const idleKey = await createKey(idle, 'ingest');

  const limitedProxy = await recordingProxy(limited.baseUrl, 0);
  const flaky = await recordingProxy(h.baseUrl, 2);
  const down = await recordingProxy(h.baseUrl, Number.POSITIVE_INFINITY);
  const silent = await silentServer();
  for (const s of [limitedProxy, flaky, down, silent]) cleanup.push(() => closeServer(s.server));

  const report = await runCsharp(build, {
    baseUrl: h.baseUrl,
    ingestKey,
    readKey,
    board: BOARD,
    profiles: PROFILES,
    follower: FOLLOWER,
    followed: FOLLOWED,
    waitBatches: BATCHES.slice(0, 2).map((batch) => batch.map(planEvent)),
    queuedBatch: BATCHES[2]!.map(planEvent),
    invalidBatch: [
      { board: BOARD, member: 'ana', value: 1, idempotencyKey: 'cs-bad-0' },
      { board: BOARD, member: 'no spaces', value: 1, idempotencyKey: 'cs-bad-1' },
      { board: BOARD, member: 'ana', value: 1, idempotencyKey: 'has space' },
    ],
    standingOf: ['ana', 'eli', 'nobody'],
    pages: [
      { limit: 3 },
      { limit: 3, offset: 3, member: 'eli' },
      { limit: 3, member: 'nobody' },
      { members: ['gus', 'nobody', 'ana'] },
      { category: 'duel' },
      { region: 'FR' },
    ],
    around: [
      { member: 'ana', radius: 1 },
      { member: 'dee', radius: 2 },
      { member: 'eli', radius: 2 },
      { member: 'nobody', radius: 2 },
    ],
    goalsOf: ['cy', 'ana', 'dee', 'nobody'],
    cutoffRanks: [1, 3, 8, 9],
    cutoffPercents: [1, 12.5, 50, 100],
    tokenMember: 'ana',
    otherMember: 'bo',
    limited: {
      baseUrl: limitedProxy.url,
      ingestKey: limitedKey,
      events: LIMITED_EVENTS.map((e) => wireEvent('cs-limited', e)),
    },
    flaky: {
      events: [{ board: 'cs-retry', member: 'ret-a', value: 5, idempotencyKey: 'cs-flaky' }],
      baseUrl: flaky.url,
    },
    down: {
      events: [{ board: 'cs-retry', member: 'ret-b', value: 5, idempotencyKey: 'cs-down' }],
      baseUrl: down.url,
    },
    idle: {
      baseUrl: idle.baseUrl,
      ingestKey: idleKey,
      events: [{ board: 'cs-idle', member: 'ana', value: 1, idempotencyKey: 'cs-pending' }],
    },
    silentUrl: silent.url,
    closedUrl: `http://127.0.0.1:${await freePort()}`,
  });
  return { h, limited, report, limitedProxy, flaky, down, silent };
}

describe('the C# client package', () => {
  it('is versioned as the server it was written against', async () => {
    const project = await readFile(`${CSHARP_DIR}/Laurel.Client.csproj`, 'utf8');
    const server = JSON.parse(await readFile(`${CSHARP_DIR}/../../package.json`, 'utf8'));
    expect(/<Version>([^<]+)<\/Version>/.exec(project)?.[1]).toBe(server.version);
  });
});

// The first test waits for start(): compiling and three Laurels take a while on a loaded machine.
describe('the C# client against a running Laurel', { timeout: 180_000 }, () => {
  let live: ReturnType<typeof start>;
  beforeAll(() => {
    live = start();
    // Each test awaits it: a failed start (mcs or mono missing, say) fails every test with its reason.
    live.catch(() => undefined);
  });
  afterAll(async () => {
    await live.catch(() => undefined);
    for (const close of cleanup.reverse()) await close();
  });

  it('sets profiles and follows', async () => {
    const { report } = await live;
    expect(report.profiles).toEqual(
      PROFILES.map((p) => ({ Id: p.member, DisplayName: p.displayName, Region: p.region, Excluded: false })),
    );
    expect(report.following).toEqual({ Member: FOLLOWER, MemberIds: FOLLOWED });
  });

  it('posts with ?wait=true and reads the results: scores and ranks before and after each batch', async () => {
    const { report } = await live;
    let before: RefStanding[] = [];
    BATCHES.slice(0, 2).forEach((batch, i) => {
      const after = standings(BATCHES.slice(0, i + 1).flat());
      expect(report[`wait.${i}`], `batch ${i}`).toEqual({
        Results: batch.map((e) => ({
          IdempotencyKey: e.key,
          Board: BOARD,
          Status: 'applied',
          Reason: null,
          Period: 'all',
          Score: score(placed(e.member, after)!.units),
          Rank: placed(e.member, after)!.rank,
          PreviousScore: placed(e.member, before) ? score(placed(e.member, before)!.units) : null,
          PreviousRank: placed(e.member, before)?.rank ?? null,
        })),
      });
      before = after;
    });
  });

  it('tells a batch not applied within the wait apart: LaurelException pending (202), still queued', async () => {
    const { report } = await live;
    expect(report.pending).toMatchObject({
      Thrown: 'Laurel.Client.LaurelException',
      Status: 202,
      Error: 'pending',
      IsTransportError: false,
    });
    expect(report['pending.status']).toMatchObject({
      IdempotencyKey: 'cs-pending',
      Board: 'cs-idle',
      Member: 'ana',
      Status: 'pending',
    });
  });

  it('posts the same events again with the same keys: duplicates, counted once', async () => {
    const { report, h } = await live;
    // Each member's score and rank as both waited batches left them: the repeat added nothing.
    const now = standings(BATCHES.slice(0, 2).flat());
    expect(report.duplicates.Results).toEqual(
      BATCHES[0]!.map((e) =>
        expect.objectContaining({
          IdempotencyKey: e.key,
          Status: 'duplicate',
          Score: score(placed(e.member, now)!.units),
          Rank: placed(e.member, now)!.rank,
          PreviousScore: score(placed(e.member, now)!.units),
        }),
      ),
    );
    // Every total is the reference's, which counts each event once.
    const page = await h.api('GET', `/v1/boards/${BOARD}/standings?limit=200`);
    expect(page.body.entries.map((e: { member: string; score: number }) => [e.member, e.score])).toEqual(
      FINAL.map((s) => [s.member, score(s.units)]),
    );
  });

  it('queues events without waiting, tells their status, and sends metadata', async () => {
    const { report, h } = await live;
    expect(report.queued).toEqual({ Accepted: BATCHES[2]!.length });
    expect(report.queuedStatuses).toEqual(
      BATCHES[2]!.map((e) =>
        expect.objectContaining({
          IdempotencyKey: e.key,
          Status: 'applied',
          Board: BOARD,
          Member: e.member,
          Period: 'all',
          Category: e.category,
          Value: score(e.units),
          OccurredAt: new Date(e.atMs).toISOString(),
        }),
      ),
    );
    const first = BATCHES[0]![0]!;
    expect(report.event).toMatchObject({
      IdempotencyKey: first.key,
      Status: 'applied',
      Value: score(first.units),
      Score: score(placed(first.member)!.units),
      OccurredAt: new Date(first.atMs).toISOString(),
    });
    expect(report.event.ReceivedAt).toEqual(expect.any(String));
    const withMetadata = await h.api('GET', `/v1/boards/${BOARD}/standings?members=ana&metadata=true`);
    expect(withMetadata.body.entries[0].metadata).toEqual(METADATA);
  });

  it("reads a member's standing; a member without a score has rank null", async () => {
    const { report, h } = await live;
    const period = (await h.api('GET', `/v1/boards/${BOARD}/standings?limit=1`)).body.period;
    const total = FINAL.length;
    expect(report.standing).toEqual(
      ['ana', 'eli', 'nobody'].map((member) => {
        const s = placed(member);
        return {
          Board: BOARD,
          Period: { Key: 'all', State: 'open', StartsAt: new Date(period.startsAt).toISOString(), EndsAt: null },
          Category: 'all',
          Region: 'world',
          Source: 'cache',
          Total: total,
          Member: member,
          Rank: s?.rank ?? null,
          Score: s ? score(s.units) : null,
          Percentile: s ? s.rank / total : null,
          TopPercent: s ? Math.max(1, Math.round((s.rank / total) * 100)) : null,
        };
      }),
    );
    const fr = standings(ALL_EVENTS.filter((e) => regionOf(e.member) === 'FR'));
    expect(report.standingFR).toMatchObject({ Region: 'FR', Total: fr.length, Rank: placed(FOLLOWER, fr)!.rank });
  });

  it('reads pages of the ranking, with "me", chosen members, a category and a region', async () => {
    const { report } = await live;
    const [top, middle, nobody, chosen, duel, fr] = report.pages;
    expect(top).toMatchObject({
      Limit: 3,
      Offset: 0,
      Total: FINAL.length,
      Me: null,
      Entries: FINAL.slice(0, 3).map(entry),
    });
    expect(middle).toMatchObject({
      Offset: 3,
      Entries: FINAL.slice(3, 6).map(entry),
      Me: { Member: 'eli', Rank: placed('eli')!.rank, Score: score(placed('eli')!.units) },
    });
    expect(nobody.Me).toEqual({ Member: 'nobody', Rank: null, Score: null, Percentile: null, TopPercent: null });
    expect(chosen.Entries).toEqual(FINAL.filter((s) => ['gus', 'ana'].includes(s.member)).map(entry));
    const duels = standings(ALL_EVENTS, 'duel');
    expect(duel).toMatchObject({ Category: 'duel', Region: 'world', Total: duels.length, Entries: duels.map(entry) });
    const french = standings(ALL_EVENTS.filter((e) => regionOf(e.member) === 'FR'));
    expect(fr).toMatchObject({ Category: 'all', Region: 'FR', Total: french.length, Entries: french.map(entry) });
  });

  it('reads around a member, clipped at the ends, and nothing around a member without a score', async () => {
    const { report } = await live;
    const expected = [
      ['ana', 1],
      ['dee', 2],
      ['eli', 2],
    ].map(([member, radius]) => {
      const at = FINAL.findIndex((s) => s.member === member);
      const r = radius as number;
      return {
        Member: member,
        Rank: FINAL[at]!.rank,
        Radius: r,
        Entries: FINAL.slice(Math.max(0, at - r), at + r + 1).map(entry),
      };
    });
    expect(report.around.slice(0, 3)).toMatchObject(expected);
    expect(report.around[3]).toMatchObject({ Member: 'nobody', Rank: null, Radius: 2, Entries: [] });
  });

  it('reads the ranking among a member and those they follow', async () => {
    const { report } = await live;
    const group = FINAL.filter((s) => s.member === FOLLOWER || FOLLOWED.includes(s.member));
    expect(report.followingStandings).toMatchObject({
      Member: FOLLOWER,
      Rank: group.findIndex((s) => s.member === FOLLOWER) + 1,
      Total: group.length,
      Following: FOLLOWED.length,
      Entries: group.map((s, i) => ({ ...entry(s), Rank: i + 1 })),
    });
  });

  it('reads goals and cutoffs equal to the reference model', async () => {
    const { report } = await live;
    const tiers = AWARD_TIERS.map((rank) => ({ award: `top${rank}`, rank }));
    ['cy', 'ana', 'dee', 'nobody'].forEach((member, i) => {
      const ref = referenceGoals(FINAL, RULES, member, member === FOLLOWER ? FOLLOWED : [], tiers);
      expect(report.goals[i], member).toMatchObject({
        Member: member,
        Category: 'all',
        Region: 'world',
        Rank: ref.rank,
        Score: ref.units === null ? null : score(ref.units),
        Next: ref.next && goal(ref.next),
        Following: ref.following.map(goal),
        Awards: ref.awards.map(goal),
        League: null,
      });
    });
    // The level pair (bo and ana): under `first`, equal is not enough for the later one.
    expect(report.goals[1].Next).toMatchObject({ Member: 'bo', Gap: 0.01 });

    const cut = referenceCutoffs(FINAL, [1, 3, 8, 9], [10_000, 125_000, 500_000, 1_000_000]);
    expect(report.cutoffs).toMatchObject({
      Total: cut.total,
      Ranks: cut.ranks.map((r) => ({ Rank: r.rank, Score: r.units === null ? null : score(r.units) })),
      Percents: cut.percents.map((p) => ({
        Percent: p.percent,
        Rank: p.rank,
        Score: p.units === null ? null : score(p.units),
      })),
    });
    const scaled = referenceCutoffs(FINAL, [], [125_000, 1_000_000]);
    expect(report.cutoffsScaled).toMatchObject({
      Ranks: [],
      Percents: scaled.percents.map((p) => ({
        Percent: p.percent,
        Rank: p.rank,
        Score: p.units === null ? null : score(p.units),
      })),
    });
    const fr = referenceCutoffs(standings(ALL_EVENTS.filter((e) => regionOf(e.member) === 'FR')), [1, 2], []);
    expect(report.cutoffsFR).toMatchObject({
      Region: 'FR',
      Total: fr.total,
      Ranks: fr.ranks.map((r) => ({ Rank: r.rank, Score: r.units === null ? null : score(r.units) })),
      Percents: [],
    });
  });

  it("reads through a caller's HttpClient and leaves it open", async () => {
    const { report } = await live;
    expect(report.sharedHttpClientAfterDispose).toBe(200);
  });

  it("reads a member's place on every board", async () => {
    const { report } = await live;
    expect(report.memberStandings.Member).toBe('ana');
    const onArena = report.memberStandings.Standings.find((s: { Board: string }) => s.Board === BOARD);
    expect(onArena).toMatchObject({
      Rank: placed('ana')!.rank,
      Score: score(placed('ana')!.units),
      Total: FINAL.length,
      Period: { Key: 'all' },
    });
  });

  it("reads as a player with a minted token: its own member routes, and a 403 for another member's", async () => {
    const { report } = await live;
    const expiresAt = Date.parse(report.token.ExpiresAt);
    expect(report.token).toMatchObject({ Member: 'ana', Token: expect.stringMatching(/^eyJ/) });
    expect(Math.abs(expiresAt - (Date.now() + 600_000))).toBeLessThan(60_000);
    expect(report['token.standing']).toMatchObject({ Member: 'ana', Rank: placed('ana')!.rank });
    expect(report['token.ownStandings']).toMatchObject({ Member: 'ana' });
    expect(report['token.ownProfile']).toMatchObject({ Id: 'ana', DisplayName: 'Ana' });
    // Board routes are read routes for any member; member routes only for the token's own.
    expect(report['token.otherOnBoard']).toMatchObject({ Member: 'bo', Rank: placed('bo')!.rank });
    for (const step of ['token.otherStandings', 'token.otherProfile', 'token.write'])
      expect(report[step], step).toMatchObject({
        Thrown: 'Laurel.Client.LaurelException',
        Status: 403,
        Error: 'forbidden',
        IsTransportError: false,
      });
    // A provider asked before each request, to renew the token.
    expect(report['provider.top'].Entries).toEqual(FINAL.slice(0, 1).map(entry));
    expect(report['provider.goals']).toMatchObject({ Member: 'ana', Rank: placed('ana')!.rank });
    expect(report['provider.asked']).toBe(2);
  });

  it("retries a 429 after Laurel's Retry-After with the very same body, and counts each event once", async () => {
    const { report, limited, limitedProxy } = await live;
    const posts = limitedProxy.log.filter((r) => r.method === 'POST');
    const refused = posts.flatMap((r, i) => (r.status === 429 ? [i] : []));
    expect(refused.length, JSON.stringify(posts.map((r) => r.status))).toBeGreaterThan(0);
    for (const i of refused) {
      const [first, retry] = [posts[i]!, posts[i + 1]!];
      expect(retry.body).toBe(first.body);
      expect(first.retryAfter).toBeGreaterThan(0);
      expect(retry.at - first.at).toBeGreaterThanOrEqual(first.retryAfter! * 1000 - 100);
    }
    // Each event reached Laurel's intake once; every result is applied, none duplicate.
    const accepted = posts.filter((r) => r.status === 200).map((r) => JSON.parse(r.body).events[0].idempotencyKey);
    expect(accepted).toEqual(LIMITED_EVENTS.map((e) => e.key));
    LIMITED_EVENTS.forEach((e, i) => {
      const after = referenceStandings(LIMITED_EVENTS.slice(0, i + 1), RULES);
      expect(report.limited[i].Results).toEqual([
        expect.objectContaining({
          IdempotencyKey: e.key,
          Status: 'applied',
          Score: e.units,
          Rank: placed(e.member, after)!.rank,
        }),
      ]);
    });
    const page = await patientGet(limited, '/v1/boards/cs-limited/standings');
    expect(page.body.entries.map((e: { member: string; score: number }) => [e.member, e.score])).toEqual(
      referenceStandings(LIMITED_EVENTS, RULES).map((s) => [s.member, s.units]),
    );
  });

  it('retries 503s with the same body, and gives up after its attempts with the last answer', async () => {
    const { report, h, flaky, down } = await live;
    expect(report.flaky.Results).toEqual([
      expect.objectContaining({ IdempotencyKey: 'cs-flaky', Status: 'applied', Score: 5 }),
    ]);
    expect(flaky.log.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(new Set(flaky.log.map((r) => r.body)).size).toBe(1);

    expect(report.down).toMatchObject({
      Status: 503,
      Error: 'unavailable',
      Message: 'the proxy is failing on purpose',
    });
    expect(down.log).toHaveLength(3);
    expect(new Set(down.log.map((r) => r.body)).size).toBe(1);
    expect((await h.api('GET', '/v1/events/cs-down?board=cs-retry')).status).toBe(404);
  });

  it('throws refusals as LaurelException with the error body, details included', async () => {
    const { report, h } = await live;
    expect(report.invalid).toMatchObject({
      Thrown: 'Laurel.Client.LaurelException',
      Status: 400,
      Error: 'validation_failed',
      Details: [
        { Index: 1, Path: 'member', Message: expect.any(String) },
        { Index: 2, Path: 'idempotencyKey', Message: expect.any(String) },
      ],
    });
    // A 400 accepts nothing of the batch, the valid event included.
    expect(report['invalid.first']).toMatchObject({ Status: 404, Error: 'not_found' });
    expect(report.unknownBoard).toMatchObject({ Status: 404, Error: 'not_found', Details: [] });
    expect(report.badKey).toMatchObject({ Status: 401, Error: 'unauthorized' });
    expect(report.readKeyPosts).toMatchObject({ Status: 403, Error: 'forbidden' });
    expect(report.cutoffsWithoutValues).toMatchObject({ Status: 400, Details: [{ Path: 'ranks' }] });
    // Refused before sending: metadata the client cannot write, a path segment no URL can carry, two credentials.
    expect(report.nestedMetadata).toMatchObject({ Thrown: 'System.ArgumentException' });
    expect(report.nestedMetadata.Message).toContain('loadout');
    expect(report.dotSegment).toMatchObject({ Thrown: 'System.ArgumentException' });
    expect(report.twoCredentials).toMatchObject({ Thrown: 'System.ArgumentException' });
    expect((await h.api('GET', '/v1/events/cs-nested')).status).toBe(404);
  });

  it('throws requests without an answer as LaurelException status 0, and a cancellation as such', async () => {
    const { report, silent } = await live;
    for (const step of ['refused', 'refused.post'])
      expect(report[step], step).toMatchObject({ Status: 0, Error: 'network_error', IsTransportError: true });
    for (const step of ['timeout', 'timeout.post'])
      expect(report[step], step).toMatchObject({ Status: 0, Error: 'timeout', IsTransportError: true });
    // The timed-out post was sent twice, the same bytes both times.
    const posts = silent.log.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0]!.body).toBe(posts[1]!.body);
    expect(JSON.parse(posts[0]!.body)).toEqual({
      events: [{ board: BOARD, member: 'ana', value: 1, idempotencyKey: 'cs-silent' }],
    });
    expect(report.cancelled).toMatchObject({ IsOperationCanceled: true });
    expect(report.cancelled.Status).toBeUndefined();
    expect(report['cancelled.afterMs']).toBeLessThan(5000);
  });
});
