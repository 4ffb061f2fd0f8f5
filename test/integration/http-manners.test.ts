import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';
import { runTick } from '../../src/services/period-tick.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { launchBrowser } from '../support/browser.js';

/** A raw GET, so the answer's own Content-Encoding and length are seen (fetch decodes them). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; bytes: number }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
    })
      .on('error', reject)
      .end();
  });
}

/** A page of a game on another origin (another port), which reads standings from Laurel. */
async function gamePage(): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>game</title><p>game'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('HTTP manners', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PUBLIC_READS: 'true' } });
    h.clock.set('2026-11-10T12:00:00Z');
    expect((await h.api('PUT', '/v1/boards/big', { aggregation: 'sum', graceSeconds: 0 })).status).toBe(201);
    const events = Array.from({ length: 300 }, (_, i) => ({
      board: 'big',
      member: `member-${i}`,
      value: i,
      idempotencyKey: `big-${i}`,
    }));
    expect((await h.api('POST', '/v1/events?wait=true', { events })).status).toBe(200);
  });
  afterAll(() => h.close());

  it('answers 405 with Allow for a known path asked with another method, 404 for an unknown path', async () => {
    const patch = await h.api('PATCH', '/v1/boards', {});
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('GET, HEAD');
    expect(patch.body).toEqual({ error: 'method_not_allowed', message: expect.stringContaining('PATCH') });
    const del = await h.api('DELETE', '/v1/boards/big');
    expect([del.status, del.headers.get('allow')]).toEqual([405, 'GET, HEAD, PUT']);
    expect((await h.api('GET', '/v1/nothing')).status).toBe(404);
  });

  it('sets Location on 201 and 202 where the resource can be read', async () => {
    const created = await h.api('PUT', '/v1/boards/placed', { aggregation: 'best' });
    expect([created.status, created.headers.get('location')]).toEqual([201, '/v1/boards/placed']);
    const single = await h.api('POST', '/v1/events', { board: 'placed', member: 'p', value: 1, idempotencyKey: 'k:1' });
    expect([single.status, single.headers.get('location')]).toEqual([202, '/v1/events/k%3A1?board=placed']);
    const rebuild = await h.api('POST', '/v1/admin/rebuilds', { board: 'placed' });
    expect([rebuild.status, rebuild.headers.get('location')]).toEqual([
      202,
      `/v1/admin/rebuilds/${rebuild.body.rebuildId}`,
    ]);
    await h.drain();
  });

  it('compresses answers over a few KB when the client accepts it, and leaves small ones alone', async () => {
    const page = await rawGet(`${h.baseUrl}/v1/boards/big/standings?limit=200`, { 'accept-encoding': 'gzip' });
    expect(page.status).toBe(200);
    expect(page.headers['content-encoding']).toBe('gzip');
    const plain = await rawGet(`${h.baseUrl}/v1/boards/big/standings?limit=200`, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(page.bytes).toBeLessThan(plain.bytes / 2);
    const small = await rawGet(`${h.baseUrl}/healthz`, { 'accept-encoding': 'gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('lets reads be cached briefly, closed periods long, and nothing else', async () => {
    expect((await h.api('GET', '/v1/boards/big/standings', undefined, null)).headers.get('cache-control')).toBe(
      'max-age=5',
    );
    expect((await h.api('GET', '/v1/boards', undefined, null)).headers.get('cache-control')).toBe('max-age=5');
    expect((await h.api('GET', '/v1/admin/stats')).headers.get('cache-control')).toBe('no-store');
    expect((await h.api('GET', '/v1/events/big-1')).headers.get('cache-control')).toBe('no-store');
    expect((await h.api('GET', '/v1/boards/none/standings')).headers.get('cache-control')).toBe('no-store');
    h.clock.set('2026-12-01T00:00:01Z');
    await runTick(h.ctx);
    for (const url of [
      '/v1/boards/big/periods/2026-11/results',
      '/v1/boards/big/standings?period=2026-11',
      '/v1/boards/big/standings/member-3?period=2026-11',
    ]) {
      const res = await h.api('GET', url, undefined, null);
      expect([res.status, res.headers.get('cache-control')], url).toEqual([200, 'max-age=86400']);
    }
    expect((await h.api('GET', '/v1/boards/big/standings', undefined, null)).headers.get('cache-control')).toBe(
      'max-age=5',
    );
  });
});

describe('CORS', () => {
  it('CORS_ORIGINS takes a list of origins, or * only with PUBLIC_READS', () => {
    const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://127.0.0.1:6379', ADMIN_API_KEY: ADMIN_KEY };
    expect(parseEnv({ ...base, CORS_ORIGINS: 'https://a.example, http://b.example:8080' }).CORS_ORIGINS).toEqual([
      'https://a.example',
      'http://b.example:8080',
    ]);
    expect(parseEnv({ ...base }).CORS_ORIGINS).toEqual([]);
    expect(parseEnv({ ...base, CORS_ORIGINS: '*', PUBLIC_READS: 'true' }).CORS_ORIGINS).toBe('*');
    expect(() => parseEnv({ ...base, CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS may be \* only with PUBLIC_READS/);
    expect(() => parseEnv({ ...base, CORS_ORIGINS: 'a.example/path' })).toThrow(/CORS_ORIGINS/);
  });

  it('lets a page on a listed origin read public standings and call with a key in real Chromium; another origin cannot', async () => {
    const page = await gamePage();
    const origin = `http://127.0.0.1:${page.port}`;
    const h = await createHarness({ workers: false, env: { PUBLIC_READS: 'true', CORS_ORIGINS: origin } });
    const browser = await launchBrowser();
    try {
      expect((await h.api('PUT', '/v1/boards/web', { aggregation: 'sum', period: 'all' })).status).toBe(201);
      // Headers as a browser sees them, checked directly too.
      const preflight = await fetch(`${h.baseUrl}/v1/boards`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
      const read = await fetch(`${h.baseUrl}/v1/boards/web/standings`, { headers: { origin } });
      expect(read.headers.get('access-control-allow-origin')).toBe(origin);
      expect(read.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(read.headers.get('vary')).toMatch(/Origin/);

      const tab = await browser.newPage();
      const fromPage = async (pageUrl: string) => {
        await tab.goto(pageUrl);
        return tab.evaluate(
          async ({ api, key }) => {
            const attempt = async (init?: RequestInit) => {
              try {
                const res = await fetch(`${api}/v1/boards/web/standings`, init);
                return {
                  status: res.status,
                  board: ((await res.json()) as { board: string }).board,
                  exposedRequestId: res.headers.get('x-request-id') !== null,
                };
              } catch (err) {
                return { failed: String(err) };
              }
            };
            return {
              anonymous: await attempt(),
              keyed: await attempt({ headers: { authorization: `Bearer ${key}` } }),
            };
          },
          { api: h.baseUrl, key: ADMIN_KEY },
        );
      };
      expect(await fromPage(`${origin}/`)).toEqual({
        anonymous: { status: 200, board: 'web', exposedRequestId: true },
        keyed: { status: 200, board: 'web', exposedRequestId: true },
      });
      // The same page under another origin (localhost is not 127.0.0.1) is refused by the browser.
      const other = await fromPage(`http://localhost:${page.port}/`);
      expect(other).toEqual({
        anonymous: { failed: expect.stringMatching(/Failed to fetch/) },
        keyed: { failed: expect.stringMatching(/Failed to fetch/) },
      });
    } finally {
      await browser.close();
      await h.close();
      await new Promise((resolve) => page.server.close(resolve));
    }
  });
});
