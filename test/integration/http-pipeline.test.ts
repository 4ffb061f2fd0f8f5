import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/services/api-keys.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request, raw: every header as sent (lower-cased names) and the body as text. An event
 * stream is read up to its first message, then the connection is dropped.
 */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const all = payload === undefined ? headers : { ...headers, 'content-type': 'application/json' };
    const req = request(base + path, { method, headers: all, agent: false }, (res) => {
      let text = '';
      const done = () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers))
          flat[name] = Array.isArray(value) ? value.join(', ') : String(value);
        resolve({ status: res.statusCode!, headers: flat, body: text });
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (String(res.headers['content-type']).startsWith('text/event-stream') && text.includes('\ndata: ')) {
          done();
          res.destroy();
        }
      });
      res.on('end', done);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** What helmet puts on every answer, as a browser reads it: the values the project promises. */
const SECURITY = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};
const ORIGIN = 'https://game.example';
const varies = (raw: Raw) => (raw.headers.vary ?? '').split(/\s*,\s*/).map((v) => v.toLowerCase());

/**
 * Every route family goes through one Express middleware chain: the same security headers,
 * request id, CORS, cache rules and error shape, whatever the route. Each family is asked
 * below, successful and failing, and the answers are compared with each other and with the
 * rules written out here.
 */
describe('one HTTP pipeline for every route', () => {
  let h: Harness;
  let readKey: string;
  let seq = 0;
  beforeAll(async () => {
    h = await createHarness({ env: { CORS_ORIGINS: ORIGIN } });
    readKey = (await createApiKey(h.ctx.db, 'pipeline-read', 'read')).key;
    expect((await h.api('PUT', '/v1/boards/pipe', { aggregation: 'best' })).status).toBe(201);
    await h.postEvents(
      Array.from({ length: 30 }, (_, i) => ({ board: 'pipe', member: `m${i}`, value: i, idempotencyKey: `pipe-${i}` })),
    );
    expect((await h.api('PUT', '/v1/members/m1/following', { memberIds: ['m2', 'm3'] })).status).toBe(200);
  });
  afterAll(() => h.close());

  const call = async (method: string, path: string, key: string | null, body?: unknown) => {
    const id = `pipe-${(seq += 1)}`;
    const headers: Record<string, string> = { origin: ORIGIN, 'x-request-id': id };
    if (key) headers.authorization = `Bearer ${key}`;
    const raw = await send(h.baseUrl, method, path, headers, body);
    expect(raw.headers['x-request-id'], `${method} ${path}: request id`).toBe(id);
    for (const [name, value] of Object.entries(SECURITY))
      expect(raw.headers[name], `${method} ${path}: ${name}`).toBe(value);
    expect(raw.headers['access-control-allow-origin'], `${method} ${path}: CORS`).toBe(ORIGIN);
    expect(raw.headers['access-control-expose-headers'], `${method} ${path}: CORS`).toBe(
      'Location,Retry-After,X-Request-Id',
    );
    expect(varies(raw), `${method} ${path}: Vary`).toContain('origin');
    return raw;
  };

  const reads: Array<[string, string]> = [
    ['standings page', '/v1/boards/pipe/standings?limit=5'],
    ['standings page with ?member= and ?members=', '/v1/boards/pipe/standings?member=m3&members=m1,m2'],
    ['member standing', '/v1/boards/pipe/standings/m5'],
    ['around', '/v1/boards/pipe/standings/m5/around?radius=2'],
    ['following', '/v1/boards/pipe/standings/m1/following'],
    ['member across boards', '/v1/members/m5/standings'],
    ['member stream', '/v1/boards/pipe/standings/m5/stream'],
    ['top stream', '/v1/boards/pipe/standings/stream?limit=3'],
    ['boards', '/v1/boards'],
    ['board', '/v1/boards/pipe'],
    ['periods', '/v1/boards/pipe/periods'],
    ['member profile', '/v1/members/m5'],
    ['awards', '/v1/members/m5/awards'],
  ];

  it.each(reads)('answers a read (%s) with the read headers', async (_family, path) => {
    const raw = await call('GET', path, readKey);
    expect(raw.status, path).toBe(200);
    expect(varies(raw), path).toContain('authorization');
    expect(raw.headers['cross-origin-resource-policy'], path).toBe('cross-origin');
    if (path.endsWith('stream') || path.includes('stream?')) {
      expect(raw.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(raw.headers['cache-control']).toBe('no-cache, no-transform');
    } else {
      expect(raw.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(raw.headers['cache-control']).toBe('max-age=5');
      expect(raw.headers.etag).toMatch(/^W\/"/);
    }
  });

  it('answers writes and admin routes with no-store and a same-origin resource policy', async () => {
    const answers = [
      await call('POST', '/v1/events', ADMIN_KEY, { board: 'pipe', member: 'w1', value: 3, idempotencyKey: 'pipe-w1' }),
      await call('PUT', '/v1/boards/pipe2', ADMIN_KEY, { aggregation: 'sum' }),
      await call('PUT', '/v1/members/w1', ADMIN_KEY, { displayName: 'W one' }),
      await call('GET', '/v1/admin/stats', ADMIN_KEY),
      await call('GET', '/v1/events/pipe-3', ADMIN_KEY),
    ];
    expect(answers.map((a) => a.status)).toEqual([202, 201, 200, 200, 200]);
    for (const raw of answers) {
      expect(raw.headers['cache-control']).toBe('no-store');
      expect(raw.headers['cross-origin-resource-policy']).toBe('same-origin');
    }
    expect(answers[0]!.headers.location).toBe('/v1/events/pipe-w1?board=pipe');
  });

  const failures: Array<[string, string, string, string | null, number, string]> = [
    ['a read without a key', 'GET', '/v1/boards/pipe/standings', null, 401, 'unauthorized'],
    ['a stream without a key', 'GET', '/v1/boards/pipe/standings/m1/stream', null, 401, 'unauthorized'],
    ['intake with a read key', 'POST', '/v1/events', 'read', 403, 'forbidden'],
    ['an unknown board', 'GET', '/v1/boards/nope/standings', 'read', 404, 'not_found'],
    ['a stream of an unknown board', 'GET', '/v1/boards/nope/standings/stream', 'read', 404, 'not_found'],
    ['a bad query', 'GET', '/v1/boards/pipe/standings?limit=0', 'read', 400, 'validation_failed'],
    ['a bad stream query', 'GET', '/v1/boards/pipe/standings/stream?limit=99', 'read', 400, 'validation_failed'],
    [
      'a member stream of an invalid member id',
      'GET',
      `/v1/boards/pipe/standings/${'x'.repeat(300)}/stream`,
      'read',
      404,
      'not_found',
    ],
    ['another method', 'PATCH', '/v1/boards/pipe/standings', 'admin', 405, 'method_not_allowed'],
    [
      'a stream asked with another method',
      'DELETE',
      '/v1/boards/pipe/standings/stream',
      'admin',
      405,
      'method_not_allowed',
    ],
    ['an unknown path', 'GET', '/v1/nothing', 'admin', 404, 'not_found'],
    ['a bad path escape', 'GET', '/v1/boards/%E0%A4%A/standings', 'read', 400, 'bad_request'],
    ['an admin route with a read key', 'GET', '/v1/admin/stats', 'read', 403, 'forbidden'],
  ];

  it.each(failures)('answers %s with the one error shape', async (_what, method, path, who, status, code) => {
    const key = who === 'read' ? readKey : who === 'admin' ? ADMIN_KEY : null;
    const raw = await call(method, path, key);
    expect(raw.status, `${method} ${path}`).toBe(status);
    expect(raw.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(raw.headers['cache-control']).toBe('no-store');
    expect(raw.headers['cross-origin-resource-policy']).toBe('same-origin');
    const body = JSON.parse(raw.body) as Record<string, unknown>;
    expect(body.error, `${method} ${path}`).toBe(code);
    expect(typeof body.message).toBe('string');
    expect(Object.keys(body).filter((k) => k !== 'details')).toEqual(['error', 'message']);
    if (status === 401) expect(raw.headers['www-authenticate']).toBe('Bearer realm="laurel"');
    if (status === 405) expect(raw.headers.allow).toMatch(/GET/);
  });

  it('answers a preflight before any key is asked for', async () => {
    const raw = await send(h.baseUrl, 'OPTIONS', '/v1/boards/pipe/standings/m1/stream', {
      origin: ORIGIN,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    });
    expect(raw.status).toBe(204);
    expect(raw.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(raw.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(raw.headers['access-control-max-age']).toBe('600');
    const foreign = await send(h.baseUrl, 'GET', '/v1/boards/pipe/standings/m1', {
      origin: 'https://other.example',
      authorization: `Bearer ${readKey}`,
    });
    expect(foreign.status).toBe(200);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(varies(foreign)).toContain('origin');
    // A game server sends no Origin: its answer still varies by Origin, so no cache hands it to a browser.
    const server = await send(h.baseUrl, 'GET', '/v1/boards/pipe/standings/m1', { authorization: `Bearer ${readKey}` });
    expect(server.headers['access-control-allow-origin']).toBeUndefined();
    expect(varies(server)).toContain('origin');
    const refused = await send(h.baseUrl, 'OPTIONS', '/v1/boards/pipe/standings', {
      origin: 'https://other.example',
      'access-control-request-method': 'GET',
      'x-request-id': 'preflight-1',
    });
    expect(refused.status).toBe(204);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    expect(refused.headers['access-control-allow-methods']).toBeUndefined();
    expect(refused.headers['x-request-id']).toBe('preflight-1');
  });
});
