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
    const web = startLaurel('web', { ...envForChild(h.env), PORT: String(port), WEB_PROCESSES: '2', LOG_LEVEL: 'silent' });
    const { child } = web;
    let code: number | string | null = null;
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/readyz`, 60_000);
      // The primary runs two web processes (node:cluster hands connections out round-robin).
      const children = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && ppidOf(pid) === child.pid);
      expect(children).toHaveLength(2);
      await h.api('PUT', '/v1/boards/clustered', { aggregation: 'sum' });
      // Fresh connections each time, so both processes get some of them.
      const requests = 40;
      for (let i = 0; i < requests; i += 1) {
        const res = await fetch(`${base}/v1/boards/clustered`, { headers: { authorization: `Bearer ${ADMIN_KEY}`, connection: 'close' } });
        expect(res.status).toBe(200);
      }
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      const count = /laurel_http_request_duration_seconds_count\{[^}]*route="\/v1\/boards\/:boardId"[^}]*status="200"[^}]*\} (\d+)/.exec(text);
      expect(Number(count?.[1])).toBe(requests);
      // Process metrics come from the aggregate too (prom-client sums them over the processes).
      expect(text).toContain('laurel_process_cpu_user_seconds_total');
    } finally {
      code = await web.stop('SIGTERM');
    }
    expect(code).toBe(0);
  }, 120_000);
});
