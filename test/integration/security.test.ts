import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createContext } from '../../src/context.js';
import { createWebApp } from '../../src/http/app.js';
import { createApiKey } from '../../src/services/api-keys.js';
import { waitUntilReady } from '../../src/storage/redis/connections.js';
import { ADMIN_KEY, createHarness, type ApiResponse, type Harness } from '../support/harness.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { routesOf } from '../support/routes.js';
import { launchBrowser } from '../support/browser.js';

type Access = 'probe' | 'public' | 'read' | 'ingest' | 'admin';

/**
 * Every route the app serves and who may call it. The test below reads the routes from the
 * app itself and fails on any route missing here, so a new route must be classified.
 * probe: no key needed and a bad key ignored; public: no key needed, a bad key refused.
 */
const ACCESS: Record<string, Access> = {
  'GET /healthz': 'probe',
  'GET /readyz': 'probe',
  'GET /openapi.json': 'public',
  'USE /docs': 'public',
  'USE /console': 'public',
  'PUT /v1/boards/:boardId': 'admin',
  'GET /v1/boards': 'read',
  'GET /v1/boards/:boardId': 'read',
  'POST /v1/events': 'ingest',
  'POST /v1/events/:idempotencyKey/void': 'admin',
  'GET /v1/events/:idempotencyKey': 'ingest',
  'GET /v1/boards/:boardId/standings': 'read',
  'GET /v1/boards/:boardId/standings/:memberId': 'read',
  'GET /v1/boards/:boardId/standings/:memberId/around': 'read',
  'GET /v1/boards/:boardId/standings/:memberId/following': 'read',
  'GET /v1/boards/:boardId/standings/:memberId/goals': 'read',
  'GET /v1/boards/:boardId/cutoffs': 'read',
  'GET /v1/boards/:boardId/standings/:memberId/stream': 'read',
  'GET /v1/boards/:boardId/standings/stream': 'read',
  'GET /v1/boards/:boardId/periods': 'read',
  'GET /v1/boards/:boardId/regions': 'read',
  'POST /v1/boards/:boardId/entrants/:memberId': 'ingest',
  'GET /v1/boards/:boardId/entrants': 'read',
  'GET /v1/boards/:boardId/standings/:memberId/league': 'read',
  'GET /v1/boards/:boardId/league/:bucket': 'read',
  'GET /v1/members/:memberId/leagues': 'read',
  'GET /v1/boards/:boardId/periods/:periodKey/results': 'read',
  'POST /v1/boards/:boardId/periods/:periodKey/close': 'admin',
  'DELETE /v1/boards/:boardId/members/:memberId': 'admin',
  'PUT /v1/members': 'ingest',
  'GET /v1/members': 'admin',
  'PUT /v1/members/:memberId': 'ingest',
  'GET /v1/members/:memberId': 'read',
  'DELETE /v1/members/:memberId': 'admin',
  'PUT /v1/members/:memberId/following': 'ingest',
  'POST /v1/members/:memberId/exclusion': 'admin',
  'DELETE /v1/members/:memberId/exclusion': 'admin',
  'GET /v1/members/:memberId/awards': 'read',
  'GET /v1/members/:memberId/notifications': 'read',
  'GET /v1/members/:memberId/standings': 'read',
  'GET /v1/members/:memberId/events': 'admin',
  'POST /v1/player-tokens': 'ingest',
  'POST /v1/admin/keys': 'admin',
  'DELETE /v1/admin/keys/:keyId': 'admin',
  'POST /v1/admin/rebuilds': 'admin',
  'GET /v1/admin/rebuilds/:rebuildId': 'admin',
  'GET /v1/admin/erasures/:erasureId': 'admin',
  'GET /v1/admin/stats': 'admin',
  'GET /metrics': 'admin',
  'USE /admin/queues': 'admin',
};

const PARAMS: Record<string, string> = {
  boardId: 'walk',
  memberId: 'm1',
  idempotencyKey: 'walk-1',
  periodKey: '2026-12',
  keyId: randomUUID(),
  rebuildId: 'no-such-rebuild',
  erasureId: 'no-such-erasure',
};

/** Concrete requests for a route: path parameters filled, mounted apps at their root and API. */
function requestsFor(route: string): Array<{ method: string; url: string }> {
  const [method, pattern] = route.split(' ') as [string, string];
  const url = pattern.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(PARAMS[name] ?? 'x'));
  if (method !== 'USE') return [{ method, url }];
  return url === '/admin/queues'
    ? [
        { method: 'GET', url },
        { method: 'GET', url: `${url}/api/queues` },
      ]
    : [{ method: 'GET', url: `${url}/` }];
}

async function call(h: Harness, method: string, url: string, authorization?: string): Promise<ApiResponse> {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  const hasBody = method !== 'GET' && method !== 'DELETE';
  if (hasBody) headers['content-type'] = 'application/json';
  const res = await fetch(h.baseUrl + url, { method, headers, body: hasBody ? '{}' : undefined });
  // An event stream never ends by itself: its status and headers are the answer.
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, body: null, headers: res.headers };
  }
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML or Prometheus text
  }
  return { status: res.status, body, headers: res.headers };
}

function expectRefusal(res: ApiResponse, status: 401 | 403, label: string): void {
  expect(res.status, label).toBe(status);
  expect(res.body, label).toMatchObject({
    error: status === 401 ? 'unauthorized' : 'forbidden',
    message: expect.any(String),
  });
  // Browsers log in to Bull Board only when challenged for basic auth.
  const challenge = label.includes(' /admin/queues') ? /^Basic realm=/ : /^Bearer realm=/;
  if (status === 401) expect(res.headers.get('www-authenticate'), label).toMatch(challenge);
}

function expectAllowed(res: ApiResponse, label: string): void {
  expect([401, 403, 429], `${label}: ${JSON.stringify(res.body).slice(0, 200)}`).not.toContain(res.status);
  expect(res.status, `${label}: ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
}

describe('roles on every route', () => {
  let h: Harness;
  let open: Harness;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    h = await createHarness({
      workers: false,
      env: { PLAYER_TOKEN_SECRET: 'walk-player-token-secret-0123456789abcdef' },
    });
    open = await createHarness({ workers: false, env: { PUBLIC_READS: 'true' } });
    for (const harness of [h, open]) {
      await harness.api('PUT', '/v1/boards/walk', { aggregation: 'sum' });
    }
    for (const role of ['ingest', 'read', 'admin'] as const) {
      keys[role] = (await h.api('POST', '/v1/admin/keys', { name: `walk-${role}`, role })).body.key;
    }
    const revoked = (await h.api('POST', '/v1/admin/keys', { name: 'walk-revoked', role: 'admin' })).body;
    expect((await h.api('DELETE', `/v1/admin/keys/${revoked.id}`)).status).toBe(204);
    keys.revoked = revoked.key;
  });
  afterAll(async () => {
    await h.close();
    await open.close();
  });

  it('knows every route the app serves', async () => {
    const web = createWebApp(h.ctx);
    try {
      expect(routesOf(web)).toEqual(Object.keys(ACCESS).sort());
    } finally {
      await web.close();
    }
  });

  it('answers each route with no key, an ingest, read, admin and revoked key as its role says', async () => {
    for (const [route, access] of Object.entries(ACCESS)) {
      for (const { method, url } of requestsFor(route)) {
        const label = (who: string) => `${method} ${url} as ${who}`;
        const none = await call(h, method, url);
        if (access === 'probe' || access === 'public') expectAllowed(none, label('anonymous'));
        else expectRefusal(none, 401, label('anonymous'));

        for (const role of ['ingest', 'read', 'admin'] as const) {
          const res = await call(h, method, url, `Bearer ${keys[role]}`);
          const allowed = access === 'probe' || access === 'public' || role === 'admin' || role === access;
          if (allowed) expectAllowed(res, label(role));
          else expectRefusal(res, 403, label(role));
        }

        const revoked = await call(h, method, url, `Bearer ${keys.revoked}`);
        if (access === 'probe') expectAllowed(revoked, label('revoked key'));
        else expectRefusal(revoked, 401, label('revoked key'));
        const malformed = await call(h, method, url, 'Bearer');
        if (access === 'probe') expectAllowed(malformed, label('malformed header'));
        else expectRefusal(malformed, 401, label('malformed header'));
      }
    }
  });

  it("lets a player token call every read route, of the member routes only its own member's", async () => {
    const tokenOf = async (member: string) => {
      const minted = await h.api('POST', '/v1/player-tokens', { member });
      expect(minted.status).toBe(201);
      return `Bearer ${minted.body.token}`;
    };
    const own = await tokenOf(PARAMS.memberId!);
    const other = await tokenOf('someone-else');
    for (const [route, access] of Object.entries(ACCESS)) {
      const memberRoute = route.includes(' /v1/members/:memberId');
      for (const { method, url } of requestsFor(route)) {
        const reads = access === 'probe' || access === 'public' || access === 'read';
        const label = (who: string) => `${method} ${url} with ${who}`;
        const asOwn = await call(h, method, url, own);
        if (reads) expectAllowed(asOwn, label("its member's token"));
        else expectRefusal(asOwn, 403, label("its member's token"));
        const asOther = await call(h, method, url, other);
        if (reads && !(memberRoute && access === 'read')) expectAllowed(asOther, label("another member's token"));
        else expectRefusal(asOther, 403, label("another member's token"));
      }
    }
  });

  it('with PUBLIC_READS=true opens read routes to anonymous callers, and nothing else', async () => {
    for (const [route, access] of Object.entries(ACCESS)) {
      for (const { method, url } of requestsFor(route)) {
        const res = await call(open, method, url);
        if (access === 'probe' || access === 'public' || access === 'read')
          expectAllowed(res, `${method} ${url} anonymous, public reads`);
        else expectRefusal(res, 401, `${method} ${url} anonymous, public reads`);
      }
    }
  });

  it('lets Bull Board be reached with basic auth carrying an admin key only', async () => {
    const basic = (key: string) => `Basic ${Buffer.from(`ops:${key}`).toString('base64')}`;
    expectAllowed(await call(h, 'GET', '/admin/queues', basic(ADMIN_KEY)), 'GET /admin/queues with basic admin');
    expectAllowed(
      await call(h, 'GET', '/admin/queues', basic(keys.admin!)),
      'GET /admin/queues with basic created admin key',
    );
    expectRefusal(
      await call(h, 'GET', '/admin/queues', basic(keys.read!)),
      403,
      'GET /admin/queues with basic read key',
    );
    const wrong = await call(h, 'GET', '/admin/queues', basic('not-a-key'));
    expectRefusal(wrong, 401, 'GET /admin/queues with basic wrong key');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    // Basic auth is for Bull Board only: a browser's remembered login opens nothing else.
    expectRefusal(await call(h, 'GET', '/v1/boards', basic(ADMIN_KEY)), 401, 'GET /v1/boards with basic admin');
  });

  it('stores keys as SHA-256 hashes, never the key itself', async () => {
    const created = (await h.api('POST', '/v1/admin/keys', { name: 'hashed', role: 'read' })).body;
    const rows = await h.ctx.db.selectFrom('api_keys').selectAll().execute();
    const row = rows.find((r) => r.id === created.id)!;
    expect(row.key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));
    for (const r of rows) {
      for (const secret of Object.values(keys).concat(created.key)) expect(JSON.stringify(r)).not.toContain(secret);
    }
  });
});

describe('security headers', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
  });
  afterAll(() => h.close());

  it('sets helmet headers on API answers, errors included, with a deny-all content policy', async () => {
    const answers = [
      await call(h, 'GET', '/v1/boards', `Bearer ${ADMIN_KEY}`),
      await call(h, 'GET', '/v1/boards', 'Bearer wrong'),
      await call(h, 'GET', '/v1/nothing-here', `Bearer ${ADMIN_KEY}`),
      await call(h, 'POST', '/v1/events', `Bearer ${ADMIN_KEY}`),
      await call(h, 'GET', '/healthz'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 400, 200]);
    for (const res of answers) {
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });

  it('gives the Swagger UI and Bull Board pages a policy that lets them run, and both render in a browser', async () => {
    const docs = await fetch(`${h.baseUrl}/docs/`);
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ httpCredentials: { username: 'admin', password: ADMIN_KEY } });
      const violations: string[] = [];
      await context.addInitScript(() => {
        const doc = (globalThis as any).document;
        doc.addEventListener('securitypolicyviolation', (e: any) =>
          console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
        );
      });
      const page = await context.newPage();
      page.on('console', (message) => {
        if (/Content Security Policy|CSP violation/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${h.baseUrl}/docs/`);
      await page.getByText('Leaderboards for games').first().waitFor({ timeout: 20_000 });
      await page.getByText('/v1/events').first().waitFor({ timeout: 20_000 });
      await page.goto(`${h.baseUrl}/admin/queues`);
      const rendered = await page
        .getByText('score-events')
        .first()
        .waitFor({ timeout: 20_000 })
        .then(
          () => true,
          () => false,
        );
      expect({ rendered, violations }).toEqual({ rendered: true, violations: expect.any(Array) });
      // Bull Board asks for web fonts from a CDN; nothing else may be blocked.
      expect(violations.filter((v) => !/fonts\.googleapis\.com/.test(v))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

function commandCalls(info: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}

describe('rate limits', () => {
  let h: Harness;
  let redis: PrivateRedis;
  let watcher: Redis;
  const newKey = async (role: 'ingest' | 'read' | 'admin') =>
    (await createApiKey(h.ctx.db, `rl-${role}-${randomBytes(3).toString('hex')}`, role)).key;
  const get = (url: string, key?: string, base = h.baseUrl) =>
    fetch(base + url, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  beforeAll(async () => {
    // The counters live in the leaderboard Redis: here one of the test's own, so it can be stopped.
    redis = await startPrivateRedis();
    h = await createHarness({
      workers: false,
      env: {
        LEADERBOARD_REDIS_URL: redis.url,
        RATE_LIMIT_PER_KEY: '5',
        RATE_LIMIT_PER_IP: '3',
        RATE_LIMIT_WINDOW_SECONDS: '60',
      },
    });
    watcher = new Redis(redis.url);
    watcher.on('error', () => undefined); // the last test stops that Redis
    expect((await h.api('PUT', '/v1/boards/rl', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  });
  afterAll(async () => {
    watcher.disconnect();
    await h.close();
    await redis.stop();
  });

  it('answers 429 with Retry-After and the API error shape once a key spends its budget, per key', async () => {
    const key = await newKey('read');
    for (let i = 0; i < 5; i += 1) expect((await get('/v1/boards', key)).status).toBe(200);
    const limited = await get('/v1/boards', key);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(await limited.json()).toEqual({ error: 'rate_limited', message: expect.stringContaining('5 per 60 s') });
    // Another key has its own budget.
    expect((await get('/v1/boards', await newKey('read'))).status).toBe(200);
  });

  it('makes a read with metadata spend more of the budget than a plain one (at most all of it)', async () => {
    const plain = await newKey('read');
    for (let i = 0; i < 5; i += 1) expect((await get('/v1/boards/rl/standings', plain)).status).toBe(200);
    const costly = await newKey('read');
    // Twenty requests' worth, capped at this budget's 5: the read passes, the next one waits.
    expect((await get('/v1/boards/rl/standings?metadata=true', costly)).status).toBe(200);
    expect((await get('/v1/boards/rl/standings', costly)).status).toBe(429);
    // metadata=false is a plain read.
    const explicit = await newKey('read');
    for (let i = 0; i < 5; i += 1)
      expect((await get('/v1/boards/rl/standings?metadata=false', explicit)).status).toBe(200);
  });

  it('shares one budget between web processes through Redis', async () => {
    const second = createContext(h.env, { log: h.ctx.log, name: 'laurel-web-2' });
    await waitUntilReady(second.leaderboard.redis);
    const web = createWebApp(second);
    const server: Server = await new Promise((resolve) => {
      const s = createServer(web.handler).listen(0, '127.0.0.1', () => resolve(s));
    });
    const otherBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const key = await newKey('read');
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1)
        statuses.push((await get('/v1/boards', key, i % 2 ? otherBase : h.baseUrl)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await web.close();
      await second.close();
    }
  });

  it('costs exactly one Redis round trip per request', async () => {
    const key = await newKey('read');
    await get('/v1/boards', key); // loads the script once
    const before = commandCalls(await watcher.info('commandstats'));
    // What the web process itself sends to that Redis, counted on its connection.
    const sent: string[] = [];
    const connection = h.ctx.leaderboard.redis as unknown as Redis;
    const original = connection.sendCommand.bind(connection);
    const spy = vi.spyOn(connection, 'sendCommand').mockImplementation((command, ...rest) => {
      sent.push(command.name);
      return original(command, ...rest);
    });
    try {
      for (let i = 0; i < 3; i += 1) expect((await get('/v1/boards', key)).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
    const after = commandCalls(await watcher.info('commandstats'));
    const delta = Object.fromEntries(
      Object.keys(after)
        .filter((name) => name !== 'info' && after[name] !== (before[name] ?? 0))
        .map((name) => [name, after[name]! - (before[name] ?? 0)]),
    );
    // Commands a script runs show in the server's stats as well: only the limiter's own may appear.
    expect(delta.evalsha).toBe(3);
    expect(Object.keys(delta).filter((name) => !['evalsha', 'set', 'incrby', 'pttl', 'expire'].includes(name))).toEqual(
      [],
    );
    expect(sent).toEqual(['evalsha', 'evalsha', 'evalsha']);
  });

  it('limits callers without a valid key per IP, failed logins included', async () => {
    for (let i = 0; i < 3; i += 1) expect((await get('/openapi.json')).status).toBe(200);
    const limited = await get('/openapi.json');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    // Guessing keys from the same address is throttled too, before any 401.
    expect((await get('/v1/boards', 'guessed-key')).status).toBe(429);
    // A valid key is not held back by its address.
    expect((await get('/v1/boards', await newKey('read'))).status).toBe(200);
    // Probes are never limited.
    expect((await get('/healthz')).status).toBe(200);
  });

  it('fails open to a per-process budget when its Redis is down: events are still accepted', async () => {
    const key = await newKey('ingest');
    await redis.crash();
    const post = (i: number) =>
      fetch(`${h.baseUrl}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ board: 'rl', member: 'p1', value: 1, idempotencyKey: `rl-down-${i}` }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await post(i)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
  });
});

describe('secrets in logs', () => {
  it('never writes a key, the webhook secret or an Authorization header to the log', async () => {
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const deliveries: Array<{ signature: string; signed: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        deliveries.push({
          signature: String(req.headers['webhook-signature']),
          signed: `${String(req.headers['webhook-id'])}.${String(req.headers['webhook-timestamp'])}.${body}`,
        });
        // The first delivery fails, so the retry path logs too.
        res.writeHead(deliveries.length === 1 ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    const webhookSecret = `whsec-${randomBytes(24).toString('hex')}`;
    const h = await createHarness({
      logDestination: sink,
      env: {
        LOG_LEVEL: 'trace',
        WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
        WEBHOOK_SECRET: webhookSecret,
      },
    });
    const secrets: string[] = [ADMIN_KEY, webhookSecret];
    try {
      const created: Record<string, { id: string; key: string }> = {};
      for (const role of ['ingest', 'read', 'admin'] as const) {
        const res = await h.api('POST', '/v1/admin/keys', { name: `log-${role}`, role });
        expect(res.status).toBe(201);
        created[role] = res.body;
        secrets.push(res.body.key);
      }
      expect((await h.api('PUT', '/v1/boards/logs', { aggregation: 'sum' })).status).toBe(201);
      expect(
        (
          await h.api(
            'POST',
            '/v1/events?wait=true',
            { board: 'logs', member: 'p1', value: 3, idempotencyKey: 'log-1' },
            created.ingest!.key,
          )
        ).status,
      ).toBe(200);
      expect((await h.api('GET', '/v1/boards/logs/standings', undefined, created.read!.key)).status).toBe(200);
      expect((await h.api('GET', '/metrics', undefined, created.admin!.key)).status).toBe(200);
      expect((await h.api('POST', '/v1/admin/rebuilds', { board: 'logs' })).status).toBe(202);
      expect((await h.api('POST', '/v1/members/p1/exclusion', { reason: 'log test' })).status).toBe(200);
      const basic = `Basic ${Buffer.from(`admin:${ADMIN_KEY}`).toString('base64')}`;
      expect((await fetch(`${h.baseUrl}/admin/queues`, { headers: { authorization: basic } })).status).toBe(200);

      // Failed authentication in every form.
      const bogus = `lrl_${randomBytes(32).toString('base64url')}`;
      secrets.push(bogus);
      expect((await h.api('GET', '/v1/boards', undefined, bogus)).status).toBe(401);
      expect((await h.api('POST', '/v1/events', { board: 'logs' }, bogus)).status).toBe(401);
      const bogusBasic = `Basic ${Buffer.from(`admin:${bogus}`).toString('base64')}`;
      expect((await fetch(`${h.baseUrl}/admin/queues`, { headers: { authorization: bogusBasic } })).status).toBe(401);
      expect((await fetch(`${h.baseUrl}/v1/boards`, { headers: { authorization: `Token ${bogus}` } })).status).toBe(
        401,
      );
      expect((await h.api('DELETE', `/v1/admin/keys/${created.read!.id}`)).status).toBe(204);
      expect((await h.api('GET', '/v1/boards', undefined, created.read!.key)).status).toBe(401);

      // A webhook signed with the secret, failing once and then delivered.
      await h.ctx.webhooksQueue.add(
        'period.closed',
        {
          deliveryId: 'log-delivery',
          type: 'period.closed',
          createdAt: new Date().toISOString(),
          data: { board: 'logs' },
        },
        { jobId: 'log-delivery', backoff: { type: 'fixed', delay: 10 } },
      );
      for (let i = 0; i < 600 && deliveries.length < 2; i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(deliveries.length).toBeGreaterThanOrEqual(2);
      expect(deliveries[1]!.signature).toBe(
        `v1,${createHmac('sha256', webhookSecret).update(deliveries[1]!.signed).digest('base64')}`,
      );
      await h.drain();
    } finally {
      await h.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }

    const text = lines.join('');
    // The log really holds what happened: requests, key creation, failed logins, the failed delivery.
    expect(text).toContain('api key created');
    expect(text).toMatch(/"queue":"webhooks"[^\n]*"msg":"job failed; it will be retried"/);
    expect(text).toMatch(/"statusCode":401/);
    // Access lines name the key, never a header.
    expect(text).toContain('"keyName":"log-ingest"');
    expect(text.toLowerCase()).not.toContain('"authorization"');
    for (const secret of secrets)
      expect(text.includes(secret), `a secret (${secret.slice(0, 6)}...) is in the log`).toBe(false);
    // Challenges (`WWW-Authenticate: Bearer realm=...`) may appear; credentials may not.
    expect(text).not.toMatch(/Bearer\s+(?!realm=)[^\s"]/);
    expect(text).not.toMatch(/Basic\s+(?!realm=)[A-Za-z0-9+/=]{8,}/);
  }, 120_000);
});
