import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { launchBrowser } from '../support/browser.js';
import { openSse, type SseClient } from '../support/sse-client.js';

const SECRET = 'player-token-test-secret-9f1c2e7a4b6d8e0f1a3c';
const secretKey = (secret: string) => new TextEncoder().encode(secret);

/** A token as a studio's own backend would sign it, with jose and nothing of Laurel's. */
async function studioToken(
  member: string,
  options: { secret?: string; issuer?: string; alg?: string; issuedAt?: number; expiresIn?: number } = {},
): Promise<string> {
  const now = options.issuedAt ?? Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer(options.issuer ?? 'laurel')
    .setSubject(member)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 3600))
    .sign(secretKey(options.secret ?? SECRET));
}

/** An unsigned token (`alg: none`), which jose will not make: built by hand. */
function unsignedToken(member: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: 'laurel', sub: member, iat: now, exp: now + 3600 })}.`;
}

/** Ranks of a `sum` board, worked out here: higher totals first, ties sharing nothing (distinct totals). */
function expectedRank(totals: Record<string, number>, member: string): number {
  const order = Object.entries(totals).sort(([, a], [, b]) => b - a);
  return order.findIndex(([m]) => m === member) + 1;
}

const TOTALS = { ann: 30, bob: 50, cy: 10 };

async function seed(h: Harness, board: string): Promise<void> {
  expect((await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'all' })).status).toBe(201);
  await h.postEvents(
    Object.entries(TOTALS).map(([member, value]) => ({ board, member, value, idempotencyKey: `${board}-${member}` })),
  );
}

async function mint(h: Harness, body: object): Promise<{ token: string; member: string; expiresAt: string }> {
  const minted = await h.api('POST', '/v1/player-tokens', body);
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  return minted.body;
}

describe('player tokens', () => {
  let h: Harness;
  const logs: string[] = [];

  beforeAll(async () => {
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
    h = await createHarness({ env: { PLAYER_TOKEN_SECRET: SECRET, LOG_LEVEL: 'info' }, logDestination: sink });
    await seed(h, 'arena');
  });
  afterAll(() => h.close());

  it('mints an HS256 token for the member, signed with the secret, for the asked lifetime', async () => {
    const before = Math.floor(Date.now() / 1000);
    const minted = await mint(h, { member: 'ann', ttlSeconds: 600 });
    expect(minted.member).toBe('ann');
    const { payload, protectedHeader } = await jwtVerify(minted.token, secretKey(SECRET), { algorithms: ['HS256'] });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ iss: 'laurel', sub: 'ann' });
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(payload.iat!).toBeGreaterThanOrEqual(before);
    expect(new Date(minted.expiresAt).getTime()).toBe(payload.exp! * 1000);

    const byDefault = decodeJwt((await mint(h, { member: 'bob' })).token);
    expect(byDefault.exp! - byDefault.iat!).toBe(3600);
    expect(decodeProtectedHeader((await mint(h, { member: 'cy', ttlSeconds: 86_400 })).token).alg).toBe('HS256');
  });

  it('refuses a bad member id or lifetime, naming the field', async () => {
    for (const [body, path] of [
      [{ member: 'no spaces' }, 'member'],
      [{}, 'member'],
      [{ member: 'ann', ttlSeconds: 59 }, 'ttlSeconds'],
      [{ member: 'ann', ttlSeconds: 86_401 }, 'ttlSeconds'],
      [{ member: 'ann', ttlSeconds: 1.5 }, 'ttlSeconds'],
      [{ member: 'ann', extra: true }, 'extra'],
    ] as const) {
      const res = await h.api('POST', '/v1/player-tokens', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });

  it("reads standings and its own member's routes", async () => {
    const { token } = await mint(h, { member: 'ann' });
    const standing = await h.api('GET', '/v1/boards/arena/standings/ann', undefined, token);
    expect(standing.status).toBe(200);
    expect(standing.body).toMatchObject({ member: 'ann', rank: expectedRank(TOTALS, 'ann'), score: TOTALS.ann });
    // Any member's place on a board, and the board itself, are read routes like any other.
    const bob = await h.api('GET', '/v1/boards/arena/standings/bob', undefined, token);
    expect([bob.status, bob.body.rank]).toEqual([200, expectedRank(TOTALS, 'bob')]);
    expect((await h.api('GET', '/v1/boards/arena/standings', undefined, token)).status).toBe(200);
    expect((await h.api('GET', '/v1/boards', undefined, token)).status).toBe(200);
    expect((await h.api('GET', '/v1/boards/arena/periods', undefined, token)).status).toBe(200);

    const profile = await h.api('GET', '/v1/members/ann', undefined, token);
    expect([profile.status, profile.body.member]).toEqual([200, 'ann']);
    const across = await h.api('GET', '/v1/members/ann/standings', undefined, token);
    expect(across.status).toBe(200);
    expect(JSON.stringify(across.body)).toContain('"arena"');
    for (const tail of ['awards', 'notifications', 'leagues']) {
      const res = await h.api('GET', `/v1/members/ann/${tail}`, undefined, token);
      expect(res.status, `${tail}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });

  it("refuses another member's member routes and every write with 403", async () => {
    const { token } = await mint(h, { member: 'ann' });
    for (const path of [
      '/v1/members/bob',
      '/v1/members/bob/standings',
      '/v1/members/bob/awards',
      '/v1/members/bob/notifications',
      '/v1/members/bob/leagues',
      '/V1/MEMBERS/bob',
      '/v1/members/bo%62',
    ]) {
      const res = await h.api('GET', path, undefined, token);
      expect([res.status, res.body.error], path).toEqual([403, 'forbidden']);
    }
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/v1/events', { board: 'arena', member: 'ann', value: 1000, idempotencyKey: 'cheat' }],
      ['PUT', '/v1/members/ann', { displayName: 'Ann' }],
      ['PUT', '/v1/members/ann/following', { memberIds: ['bob'] }],
      ['POST', '/v1/player-tokens', { member: 'ann' }],
      ['PUT', '/v1/boards/arena', { aggregation: 'best' }],
      ['DELETE', '/v1/members/ann', undefined],
    ];
    for (const [method, path, body] of writes) {
      const res = await h.api(method, path, body, token);
      expect([res.status, res.body.error], `${method} ${path}`).toEqual([403, 'forbidden']);
    }
    // Reads of other roles too.
    expect((await h.api('GET', '/v1/events/arena-ann', undefined, token)).status).toBe(403);
    expect((await h.api('GET', '/v1/members/ann/events', undefined, token)).status).toBe(403);
    await h.drain();
    const after = await h.api('GET', '/v1/boards/arena/standings/ann');
    expect(after.body.score).toBe(TOTALS.ann);
  });

  it('accepts a token the studio signs with the same secret', async () => {
    const token = await studioToken('ann');
    const res = await h.api('GET', '/v1/members/ann/standings', undefined, token);
    expect(res.status).toBe(200);
    expect((await h.api('GET', '/v1/members/bob/standings', undefined, token)).status).toBe(403);
  });

  it('refuses with 401 a bad signature, another issuer, another algorithm, no signature and an expired token', async () => {
    const past = Math.floor(Date.now() / 1000) - 7200;
    const refused: Record<string, string> = {
      'bad signature': await studioToken('ann', { secret: 'another-secret-of-enough-length-0123456789' }),
      'another issuer': await studioToken('ann', { issuer: 'someone-else' }),
      HS512: await studioToken('ann', { alg: 'HS512' }),
      'alg none': unsignedToken('ann'),
      expired: await studioToken('ann', { issuedAt: past, expiresIn: 3600 }),
      tampered: (await studioToken('bob')).replace(/^([^.]+)\.[^.]+/, (_all, header: string) => {
        const payload = Buffer.from(JSON.stringify({ iss: 'laurel', sub: 'ann', exp: 9_999_999_999 })).toString(
          'base64url',
        );
        return `${header}.${payload}`;
      }),
    };
    for (const [why, token] of Object.entries(refused)) {
      const res = await h.api('GET', '/v1/boards/arena/standings/ann', undefined, token);
      expect([res.status, res.body.error], why).toEqual([401, 'unauthorized']);
      expect(res.headers.get('www-authenticate'), why).toMatch(/^Bearer/);
    }
  });

  it('writes no token to the logs, accepted or refused', async () => {
    const { token } = await mint(h, { member: 'ann' });
    await h.api('GET', '/v1/boards/arena/standings/ann', undefined, token);
    await h.api('GET', '/v1/members/bob', undefined, token);
    await h.api('POST', '/v1/events', { board: 'arena', member: 'ann', value: 1, idempotencyKey: 'x' }, token);
    const forged = await studioToken('ann', { secret: 'another-secret-of-enough-length-0123456789' });
    await h.api('GET', '/v1/boards/arena/standings/ann', undefined, forged);
    const written = logs.join('');
    expect(written).toContain('request completed');
    for (const t of [token, forged]) {
      expect(written).not.toContain(t);
      // Nor its signature on its own, the part that makes it a credential.
      expect(written).not.toContain(t.split('.')[2]);
    }
  });
});

describe('player tokens without PLAYER_TOKEN_SECRET', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
    expect((await h.api('PUT', '/v1/boards/plain', { aggregation: 'sum' })).status).toBe(201);
  });
  afterAll(() => h.close());

  it('answers 503 not_configured to a mint and accepts no token', async () => {
    const res = await h.api('POST', '/v1/player-tokens', { member: 'ann' });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: 'not_configured',
      message: expect.stringContaining('PLAYER_TOKEN_SECRET'),
    });
    const refused = await h.api('GET', '/v1/boards/plain/standings/ann', undefined, await studioToken('ann'));
    expect([refused.status, refused.body.error]).toEqual([401, 'unauthorized']);
  });
});

describe('a member reading with player tokens has a budget and a stream cap of its own', () => {
  let h: Harness;
  const open: SseClient[] = [];
  beforeAll(async () => {
    // A window far longer than the test, so no count is reset while it runs.
    h = await createHarness({
      workers: false,
      env: {
        PLAYER_TOKEN_SECRET: SECRET,
        RATE_LIMIT_PER_PLAYER: '6',
        RATE_LIMIT_WINDOW_SECONDS: '3600',
        STREAMS_PER_PLAYER: '2',
      },
    });
    expect((await h.api('PUT', '/v1/boards/caps', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await h.close();
  });

  it("spends one budget for the member's tokens, whoever signed them, then answers 429 with Retry-After", async () => {
    const laurels = (await mint(h, { member: 'dee' })).token;
    const studios = await studioToken('dee');
    const read = (token: string) => h.api('GET', '/v1/boards/caps/standings/dee', undefined, token);
    for (const token of [laurels, studios, laurels, studios, laurels, studios])
      expect((await read(token)).status).toBe(200);
    const over = await read(laurels);
    expect([over.status, over.body.error]).toEqual([429, 'rate_limited']);
    expect(over.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect((await read(studios)).status).toBe(429);
    // Another member, and the key that minted, keep their own budgets.
    expect((await read(await studioToken('eve'))).status).toBe(200);
    expect((await h.api('GET', '/v1/boards/caps/standings/dee')).status).toBe(200);
  });

  it('holds at most STREAMS_PER_PLAYER open streams per member, 429 with Retry-After beyond', async () => {
    const url = `${h.baseUrl}/v1/boards/caps/standings/fay/stream`;
    const fay = [(await mint(h, { member: 'fay' })).token, await studioToken('fay')];
    for (const token of fay) {
      const stream = await openSse(url, token);
      open.push(stream);
      expect(stream.status).toBe(200);
    }
    const third = await openSse(url, fay[0]!);
    open.push(third);
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ error: 'rate_limited', message: expect.stringMatching(/member/) });
    // Another member's token opens its own.
    const other = await openSse(url, await studioToken('gus'));
    open.push(other);
    expect(other.status).toBe(200);

    // A closed stream gives its place back.
    open[0]!.close();
    let again = await openSse(url, fay[1]!);
    for (let i = 0; again.status !== 200 && i < 100; i += 1) {
      await new Promise((r) => setTimeout(r, 50));
      again = await openSse(url, fay[1]!);
    }
    open.push(again);
    expect(again.status).toBe(200);
  });
});

/** A game's page on another origin: reads its member's rank with a player token and shows it. */
const GAME_PAGE = `<!doctype html><title>game</title><p id="rank">loading</p>
<script type="module">
  const { api, token, board, member } = JSON.parse(decodeURIComponent(location.hash.slice(1)));
  const shown = document.getElementById('rank');
  try {
    const res = await fetch(api + '/v1/boards/' + board + '/standings/' + member, {
      headers: { authorization: 'Bearer ' + token },
    });
    const body = await res.json();
    shown.textContent = res.ok ? 'rank ' + body.rank : 'error ' + res.status;
  } catch (err) {
    shown.textContent = 'failed ' + err;
  }
  shown.dataset.done = 'yes';
</script>`;

describe('a browser page on a listed origin', () => {
  let h: Harness;
  let page: Server;
  let origin: string;
  beforeAll(async () => {
    page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(GAME_PAGE));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', () => resolve()));
    origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    h = await createHarness({ env: { PLAYER_TOKEN_SECRET: SECRET, CORS_ORIGINS: origin } });
    await seed(h, 'web');
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => page.close(() => resolve()));
    await h.close();
  });

  it('shows its own rank read with a player token in Chromium', async () => {
    const { token } = await mint(h, { member: 'ann' });
    const browser = await launchBrowser();
    try {
      const tab = await browser.newPage();
      const shownRank = async (at: string) => {
        const state = encodeURIComponent(JSON.stringify({ api: h.baseUrl, token, board: 'web', member: 'ann' }));
        await tab.goto(`${at}/#${state}`);
        await tab.waitForSelector('#rank[data-done]');
        return tab.textContent('#rank');
      };
      expect(await shownRank(origin)).toBe(`rank ${expectedRank(TOTALS, 'ann')}`);
      // The same page served from an origin not listed cannot read the answer.
      const other = await shownRank(origin.replace('127.0.0.1', 'localhost'));
      expect(other).toMatch(/^failed/);
    } finally {
      await browser.close();
    }
  });
});
