import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessLog } from '../../src/http/access-log.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/observability/metrics.js';

describe('access log', () => {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const metrics = new Metrics(() => []);
  let base = '';
  let close: () => void = () => undefined;

  beforeAll(async () => {
    const app = express();
    app.use(accessLog(createLogger('info', sink), metrics));
    app.get('/v1/things/:id', (_req, res) => {
      res.locals.principal = { name: 'reader-key', role: 'read' };
      res.json({ ok: true });
    });
    app.delete('/v1/boards/:boardId/standings/:memberId', (_req, res) => res.json({ ok: true }));
    app.get('/healthz', (_req, res) => res.json({ ok: true }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it('writes one line per request with its id, status, time and key name, and never a header', async () => {
    const secret = 'lrl_this-key-must-never-be-logged';
    const res = await fetch(`${base}/v1/things/42?x=1`, {
      headers: { authorization: `Bearer ${secret}`, 'x-request-id': 'req-123' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-123');
    await new Promise((r) => setTimeout(r, 50));
    const line = lines.find((l) => l.reqId === 'req-123');
    expect(line).toMatchObject({
      msg: 'request completed',
      req: { method: 'GET', url: '/v1/things/42?x=1' },
      res: { statusCode: 200 },
      keyName: 'reader-key',
    });
    expect(typeof line!.responseTime).toBe('number');
    expect(raw.join('')).not.toContain(secret);
    expect(raw.join('').toLowerCase()).not.toContain('authorization');
  });

  it('gives a request without an id a fresh one, skips health checks, and counts every request by route', async () => {
    const before = lines.length;
    const res = await fetch(`${base}/v1/things/7`);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await fetch(`${base}/healthz`);
    await new Promise((r) => setTimeout(r, 50));
    const added = lines.slice(before);
    expect(added.map((l) => l.reqId)).toEqual([res.headers.get('x-request-id')]);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      /laurel_http_request_duration_seconds_count\{method="GET",route="\/v1\/things\/:id",status="200"\} 2/,
    );
    expect(text).toMatch(/laurel_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} 1/);
  });

  it('names no member: the id in the path stays a pattern, member=, members= and q= values are left out', async () => {
    const victim = 'victim-4711';
    await fetch(`${base}/v1/boards/weekly/standings/${victim}?period=current&member=${victim}`, {
      method: 'DELETE',
      headers: { 'x-request-id': 'req-member' },
    });
    await fetch(`${base}/v1/things/7?members=${victim},other&limit=5`, { headers: { 'x-request-id': 'req-query' } });
    // A member search names the start of an id or a display name.
    await fetch(`${base}/v1/things/7?limit=5&q=${victim.slice(0, 8)}`, { headers: { 'x-request-id': 'req-search' } });
    await new Promise((r) => setTimeout(r, 50));
    expect(lines.find((l) => l.reqId === 'req-member')).toMatchObject({
      req: { method: 'DELETE', url: '/v1/boards/weekly/standings/:memberId?period=current&member=:member' },
    });
    expect(lines.find((l) => l.reqId === 'req-query')).toMatchObject({
      req: { url: '/v1/things/7?members=:member&limit=5' },
    });
    expect(lines.find((l) => l.reqId === 'req-search')).toMatchObject({
      req: { url: '/v1/things/7?limit=5&q=:member' },
    });
    expect(raw.join('')).not.toContain(victim.slice(0, 8));
  });
});
