import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, envForChild, type Harness } from '../support/harness.js';
import { startLaurel, waitForHttp, type LaurelProcess } from '../support/laurel-process.js';
import { freePort } from '../support/free-port.js';
import { lateProxy, type LateProxy } from '../support/late-tcp-proxy.js';

/**
 * A web process whose Postgres goes away: it keeps taking events with the board definitions
 * and key verdicts it last saw (past their short expiry), a valid key's renewals never spend
 * the address's lookup budget (no 429 for a database failure), and concurrent requests with
 * one key whose entry expired share one lookup.
 */
let h: Harness;
let web: LaurelProcess;
let base: string;
let postgres: LateProxy;
let ingestKey: string;

beforeAll(async () => {
  h = await createHarness({ concurrency: 2 });
  expect((await h.api('PUT', '/v1/boards/no-pg', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  ingestKey = (await h.api('POST', '/v1/admin/keys', { name: 'game-server', role: 'ingest' })).body.key;
  const direct = new URL(h.env.DATABASE_URL);
  postgres = await lateProxy(Number(direct.port || 5432), direct.hostname);
  await postgres.start();
  const url = new URL(direct);
  url.port = String(postgres.port);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  web = startLaurel(
    'web',
    {
      ...envForChild(h.env),
      DATABASE_URL: url.toString(),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      API_KEY_CACHE_SECONDS: '1',
      RATE_LIMIT_KEY_LOOKUPS_PER_IP: '3',
    },
    'web-no-pg',
  );
  await waitForHttp(`${base}/readyz`);
});
afterAll(async () => {
  await web?.stop();
  await postgres?.stop();
  await h?.close();
});

const post = (key: string) =>
  fetch(`${base}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ board: 'no-pg', member: 'ann', value: 1, idempotencyKey: key }),
  }).then(async (r) => ({ status: r.status, body: await r.text() }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('intake while Postgres is down', () => {
  it('concurrent requests with one key whose entry expired share one lookup, and spend no lookup budget', async () => {
    expect((await post('warm-0')).status).toBe(202);
    await sleep(2500); // past the key's entry (1 s) and the board's (2 s)
    const before = postgres.writes;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(`shared-${i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    // One key lookup and one board lookup (a statement may take two writes), not one per request.
    expect(postgres.writes - before).toBeLessThanOrEqual(6);
  });

  it('goes on accepting with the last known board and key, past their expiry, without a 429 or a 503', async () => {
    await postgres.stop();
    await sleep(2500);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      statuses.push((await post(`down-${i}`)).status);
      await sleep(100);
    }
    expect(statuses).toEqual(Array(12).fill(202));
    await postgres.start();
    await h.drain();
    for (const key of ['down-0', 'down-11', 'shared-19'])
      expect((await h.api('GET', `/v1/events/${key}`)).body.status, key).toBe('applied');
  });
});
