import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, envForChild, type Harness } from '../support/harness.js';
import { startLaurel, waitForHttp } from '../support/laurel-process.js';
import { freePort } from '../support/free-port.js';

let h: Harness;

function ppidOf(pid: string): number | null {
  try {
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return null; // gone meanwhile
  }
}

beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(() => h.close());

describe('web cluster (WEB_PROCESSES)', () => {
  it('serves from several processes, counts every request in one /metrics, and shuts down in order on SIGTERM', async () => {
    const port = await freePort();
    const web = startLaurel('web', {
      ...envForChild(h.env),
      PORT: String(port),
      WEB_PROCESSES: '2',
      LOG_LEVEL: 'info',
    });
    const { child } = web;
    let code: number | string | null = null;
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/readyz`);
      // One process answering is not both started: wait until each has its port.
      await web.waitForLog(() => web.logs.filter((x) => x.msg === 'http listening').length >= 2);
      // The primary runs two web processes (node:cluster hands connections out round-robin).
      const children = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && ppidOf(pid) === child.pid);
      expect(children).toHaveLength(2);
      await h.api('PUT', '/v1/boards/clustered', { aggregation: 'sum' });
      // Fresh connections each time, so both processes get some of them.
      const requests = 40;
      for (let i = 0; i < requests; i += 1) {
        const res = await fetch(`${base}/v1/boards/clustered`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}`, connection: 'close' },
        });
        expect(res.status).toBe(200);
      }
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      const count =
        /laurel_http_request_duration_seconds_count\{[^}]*route="\/v1\/boards\/:boardId"[^}]*status="200"[^}]*\} (\d+)/.exec(
          text,
        );
      expect(Number(count?.[1])).toBe(requests);
      // Process metrics come from the aggregate too (prom-client sums them over the processes).
      expect(text).toContain('laurel_process_cpu_user_seconds_total');
    } finally {
      code = await web.stop('SIGTERM');
    }
    expect(code).toBe(0);
  }, 300_000);

  it('drains through a SHUTDOWN_DELAY_MS longer than 20 s (the primary once cut its processes off there) and exits 0', async () => {
    const port = await freePort();
    // Above the 20 s the primary used to allow, whatever the settings; SHUTDOWN_TIMEOUT_MS small,
    // so the primary's cap (delay + timeout + margin) stays near the delay.
    const delayMs = 22_000;
    const web = startLaurel('web', {
      ...envForChild(h.env),
      PORT: String(port),
      WEB_PROCESSES: '2',
      SHUTDOWN_DELAY_MS: String(delayMs),
      SHUTDOWN_TIMEOUT_MS: '1000',
      LOG_LEVEL: 'info',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/readyz`);
      // Signal only once each process has its port: one still starting would be stopped before
      // it could log its drain.
      await web.waitForLog(() => web.logs.filter((x) => x.msg === 'http listening').length >= 2);
      const exited = web.stop('SIGTERM');
      const signalled = Date.now();
      // Both processes drain: out of rotation, still serving during the delay.
      await web.waitForLog(
        (l) => l.msg === 'shutting down' && web.logs.filter((x) => x.msg === 'shutting down').length >= 2,
      );
      const readyz = await fetch(`${base}/readyz`);
      expect(readyz.status).toBe(503);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(await exited).toBe(0);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(delayMs);
      expect(web.logs.filter((l) => l.msg === 'stopped')).toHaveLength(2);
      expect(web.logs.some((l) => /took too long/.test(l.msg))).toBe(false);
    } finally {
      await web.stop('SIGKILL');
    }
  }, 300_000);
});
