import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, envForChild, type Harness } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { startLaurel, waitForHttp, type LaurelProcess } from '../support/laurel-process.js';

/** Headers that belong to one answer, not to the rules every answer follows. */
const PER_ANSWER = new Set([
  'content-type',
  'content-length',
  'date',
  'etag',
  'x-request-id',
  'connection',
  'keep-alive',
]);

describe('the metrics role, on the web side and on a worker-only process', () => {
  let h: Harness;
  let worker: LaurelProcess;
  let probes = '';
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    h = await createHarness({ workers: false });
    for (const role of ['metrics', 'read', 'ingest', 'admin']) {
      const res = await h.api('POST', '/v1/admin/keys', { name: `${role}-key`, role });
      expect(res.status, role).toBe(201);
      expect(res.body.role).toBe(role);
      keys[role] = res.body.key;
    }
    const port = await freePort();
    probes = `http://127.0.0.1:${port}`;
    worker = startLaurel('worker', { ...envForChild(h.env), METRICS_PORT: String(port), LOG_LEVEL: 'warn' });
    await waitForHttp(`${probes}/readyz`);
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await h?.close();
  });

  const get = async (base: string, path: string, key: string | null, method = 'GET') => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      body: method === 'POST' ? JSON.stringify({ board: 'b', member: 'm', value: 1, idempotencyKey: 'k' }) : undefined,
    });
    const body = await res.text();
    return { status: res.status, body, headers: res.headers };
  };

  it('lets metrics and admin keys scrape both sides, answers others 401 or 403 by the same rules', async () => {
    for (const base of [h.baseUrl, probes]) {
      const statuses = {
        none: (await get(base, '/metrics', null)).status,
        read: (await get(base, '/metrics', keys.read!)).status,
        ingest: (await get(base, '/metrics', keys.ingest!)).status,
        metrics: (await get(base, '/metrics', keys.metrics!)).status,
        createdAdmin: (await get(base, '/metrics', keys.admin!)).status,
        envAdmin: (await get(base, '/metrics', ADMIN_KEY)).status,
      };
      expect(statuses, base).toEqual({
        none: 401,
        read: 403,
        ingest: 403,
        metrics: 200,
        createdAdmin: 200,
        envAdmin: 200,
      });
      const scraped = await get(base, '/metrics', keys.metrics!);
      expect(scraped.body, base).toMatch(/^# HELP laurel_/m);
      const refused = await get(base, '/metrics', keys.read!);
      expect(JSON.parse(refused.body), base).toEqual({
        error: 'forbidden',
        message: 'this route needs the metrics role; the key "read-key" has read',
      });
    }
  });

  it('gives a metrics key nothing else: no read, no write, refused before the body', async () => {
    expect((await get(h.baseUrl, '/v1/boards', keys.metrics!)).status).toBe(403);
    const write = await get(h.baseUrl, '/v1/events', keys.metrics!, 'POST');
    expect(write.status).toBe(403);
    expect(JSON.parse(write.body).message).toBe('the key "metrics-key" has the metrics role, which only reads (GET)');
    expect(write.headers.get('connection')).toBe('close');
  });

  it('answers the worker side with the same headers as the web side', async () => {
    const names = (headers: Headers) => [...headers.keys()].filter((name) => !PER_ANSWER.has(name)).sort();
    for (const [path, role] of [
      ['/metrics', 'metrics'],
      ['/metrics', 'read'],
      ['/metrics', null],
      ['/nowhere', 'metrics'],
    ] as const) {
      const key = role === null ? null : keys[role]!;
      const [web, probe] = [await get(h.baseUrl, path, key), await get(probes, path, key)];
      expect(probe.status, `${path} ${role}`).toBe(web.status);
      expect(names(probe.headers), `${path} ${role}`).toEqual(names(web.headers));
    }
    expect((await get(probes, '/metrics', null)).headers.get('x-content-type-options')).toBe('nosniff');
  });
});
