import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebApp, type WebApp } from '../../src/http/app.js';
import { hotRoutes } from '../../src/http/routes/hot-routes.js';
import { createApiKey } from '../../src/services/api-keys.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';

interface Raw {
  status: number;
  /** Header names as sent (case kept) with their values, in the order sent. */
  headers: Array<[string, string]>;
  body: string;
}

function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks).toString('latin1') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What may differ between two answers to the same request: the second they were sent in. */
const comparable = (raw: Raw) => ({ ...raw, headers: raw.headers.filter(([name]) => name.toLowerCase() !== 'date') });

/** The access-log lines written so far, without what differs per request (time, latency). */
function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.includes('"request completed"'))
    .map((line) => {
      const { time: _t, responseTime: _r, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return rest;
    });
}

/**
 * The door (`src/http/door.ts`) answers the hot routes in front of Express; Express holds
 * them too. Each request below is sent to both, the same app over the same context: one
 * server runs the door, the other the Express app alone. Status, every header (name, case,
 * value and order, but Date), body and access-log line must be the same.
 */
describe('the door against Express', () => {
  let h: Harness;
  let log = '';
  let expressOnly: WebApp;
  let server: Server;
  let expressBase: string;
  let readKey: string;
  beforeAll(async () => {
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => (log += chunk.toString()));
    h = await createHarness({ logDestination: sink, env: { LOG_LEVEL: 'info', CORS_ORIGINS: 'https://game.example' } });
    expressOnly = createWebApp(h.ctx);
    server = await new Promise((resolve) => {
      const s = createServer(expressOnly.app).listen(0, '127.0.0.1', () => resolve(s));
    });
    expressBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    readKey = (await createApiKey(h.ctx.db, 'door-read', 'read')).key;
    expect((await h.api('PUT', '/v1/boards/door', { aggregation: 'best', categories: ['speed'] })).status).toBe(201);
    const events = Array.from({ length: 400 }, (_, i) => ({ board: 'door', member: `m.${i}@x`, value: i % 37, idempotencyKey: `door-${i}`, category: 'speed' }));
    await h.postEvents(events);
    expect((await h.api('PUT', '/v1/members/m.1@x/following', { memberIds: ['m.2@x', 'm.3@x', 'm.399@x'] })).status).toBe(200);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await expressOnly.close();
    await h.close();
  });

  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  const json = { ...admin, 'content-type': 'application/json' };

  async function both(method: string, path: string, headers: Record<string, string>, body?: string) {
    const id = `door-${Math.random().toString(36).slice(2)}`;
    const withId = { ...headers, 'x-request-id': id };
    const before = logLines(log).length;
    const door = await send(h.baseUrl, method, path, withId, body);
    const plain = await send(expressBase, method, path, withId, body);
    // Each line is written on `finish`, a moment after the answer arrived.
    const lines = await until('both access-log lines', async () => (logLines(log).length >= before + 2 ? logLines(log).slice(before) : undefined));
    expect(lines, `${method} ${path}: access-log lines`).toHaveLength(2);
    expect(lines[0], `${method} ${path}: access-log line`).toEqual(lines[1]);
    expect(comparable(door), `${method} ${path}`).toEqual(comparable(plain));
    return door;
  }

  it('holds every hot route in the Express router too', () => {
    const served = new Set<string>();
    const walk = (stack: Array<{ route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: unknown[] } }>) => {
      for (const layer of stack) {
        if (layer.route) for (const m of Object.keys(layer.route.methods)) served.add(`${m.toUpperCase()} ${layer.route.path}`);
        else if (layer.handle?.stack) walk(layer.handle.stack as typeof stack);
      }
    };
    walk((expressOnly.app as unknown as { router: { stack: Parameters<typeof walk>[0] } }).router.stack);
    const hot = hotRoutes(h.ctx, { open: async () => Promise.reject(new Error('unused')), close: async () => undefined });
    expect(hot.length).toBeGreaterThan(5);
    for (const route of hot) expect(served.has(`${route.method} ${route.path}`), `${route.method} ${route.path}`).toBe(true);
  });

  it('answers the hot reads as Express does: pages, ranks, around, following, every board', async () => {
    const reads = [
      '/v1/boards/door/standings',
      '/v1/boards/door/standings?limit=200&offset=10&category=speed',
      '/v1/boards/door/standings?members=m.1@x,m.5@x,nobody&member=m.7@x',
      '/v1/boards/door/standings/m.5%40x',
      '/v1/boards/door/standings/nobody',
      '/v1/boards/door/standings/m.5@x/around?radius=3',
      '/v1/boards/door/standings/m.1@x/following?limit=2',
      '/v1/members/m.5@x/standings',
      '/V1/Boards/door/Standings/m.5@x/',
    ];
    for (const path of reads) {
      const door = await both('GET', path, admin);
      expect(door.status, path).toBe(200);
    }
    expect((await both('HEAD', '/v1/boards/door/standings/m.5@x', admin)).body).toBe('');
  });

  it('compresses, tags and revalidates as Express does', async () => {
    const page = await both('GET', '/v1/boards/door/standings?limit=200', { ...admin, 'accept-encoding': 'gzip, br' });
    expect(page.headers.find(([n]) => n.toLowerCase() === 'content-encoding')?.[1]).toBe('br');
    const etag = page.headers.find(([n]) => n.toLowerCase() === 'etag')![1];
    const unchanged = await both('GET', '/v1/boards/door/standings?limit=200', { ...admin, 'if-none-match': etag });
    expect(unchanged.status).toBe(304);
    const origin = await both('GET', '/v1/boards/door/standings/m.5@x', { ...admin, origin: 'https://game.example' });
    expect(origin.headers.some(([n, v]) => n.toLowerCase() === 'access-control-allow-origin' && v === 'https://game.example')).toBe(true);
  });

  it('refuses as Express does: keys, roles, query, board, member, path escapes', async () => {
    const refusals: Array<[string, Record<string, string>, number]> = [
      ['/v1/boards/door/standings/m.5@x', {}, 401],
      ['/v1/boards/door/standings/m.5@x', { authorization: 'Bearer nonsense' }, 401],
      ['/v1/boards/door/standings/m.5@x', { authorization: 'Basic eDp5' }, 401],
      ['/v1/boards/door/standings?limit=500', admin, 400],
      ['/v1/boards/door/standings?period=1999-01', admin, 404],
      ['/v1/boards/none/standings/m.5@x/around', admin, 404],
      ['/v1/boards/door/standings/bad%20member', admin, 404],
      ['/v1/boards/door/standings/%E0%A4%A', admin, 400],
      ['/v1/members/m.5@x/standings?period=' + 'x'.repeat(40), admin, 400],
    ];
    for (const [path, headers, status] of refusals) expect((await both('GET', path, headers)).status, path).toBe(status);
    expect((await both('GET', '/v1/boards/door/standings', { authorization: `Bearer ${readKey}`, 'content-length': '2' }, '{}')).status).toBe(200);
  });

  it('takes events as Express does: one event, a batch, and every refusal of the body', async () => {
    const one = JSON.stringify({ board: 'door', member: 'late', value: 3, idempotencyKey: 'door:single' });
    const single = await both('POST', '/v1/events', json, one);
    expect(single.status).toBe(202);
    expect(single.headers.find(([n]) => n === 'Location')?.[1]).toBe('/v1/events/door%3Asingle');
    expect((await both('POST', '/v1/events', json, JSON.stringify({ events: [{ board: 'door', member: 'late', value: 4, idempotencyKey: 'door:b' }] }))).status).toBe(
      202,
    );
    const refused: Array<[Record<string, string>, string | undefined, number]> = [
      [json, JSON.stringify({ board: 'door', member: 'late', value: 'x', idempotencyKey: 'door:bad' }), 400],
      [json, '{"board":', 400],
      [json, undefined, 400],
      [{ ...admin, 'content-type': 'text/plain' }, one, 415],
      [{ ...json, 'content-encoding': 'zip' }, one, 415],
      [{ ...json, 'content-type': 'application/json; charset=latin1' }, one, 415],
      [json, JSON.stringify({ events: [], pad: 'x'.repeat(1024 * 1024) }), 413],
      [{ 'content-type': 'application/json' }, one, 401],
      [{ authorization: `Bearer ${readKey}`, 'content-type': 'application/json' }, one, 403],
    ];
    for (const [headers, body, status] of refused)
      expect((await both('POST', '/v1/events', headers, body)).status, `${JSON.stringify(headers)} ${body?.slice(0, 40)}`).toBe(status);
    expect((await both('POST', '/v1/events?wait=maybe', json, one)).status).toBe(400);
    await h.drain();
  });

  it('leaves other methods and paths to Express: 405 with Allow, 404', async () => {
    expect((await both('DELETE', '/v1/boards/door/standings/m.5@x', admin)).status).toBe(405);
    expect((await both('PUT', '/v1/events', json, '{}')).status).toBe(405);
    expect((await both('GET', '/v1/boards/door/standings/m.5@x/elsewhere', admin)).status).toBe(404);
  });

  it('counts a door answer in the route metrics as Express would', async () => {
    const count = async () => {
      const text = await h.ctx.metrics.registry.metrics();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('laurel_http_request_duration_seconds_count{') &&
            l.includes('route="/v1/boards/:boardId/standings/:memberId/around"') &&
            l.includes('status="200"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await count();
    expect((await send(h.baseUrl, 'GET', '/v1/boards/door/standings/m.5@x/around', admin)).status).toBe(200);
    expect(await until('the request counted', async () => ((await count()) > before ? count() : undefined))).toBe(before + 1);
  });
});
