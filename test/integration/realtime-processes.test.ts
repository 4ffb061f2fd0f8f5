import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSource } from 'eventsource';
import { startDeployment, ADMIN_KEY, type Deployment } from '../support/deployment.js';
import { startLaurel, waitForHttp } from '../support/laurel-process.js';
import { openSse, type SseClient, type SseMessage } from '../support/sse-client.js';

/**
 * Streams served by real web processes (the production entry points) with a real worker,
 * a queue Redis and a leaderboard Redis of their own: coalescing, a web process restart
 * and the leaderboard Redis lost. Events are posted through the second web process, so the
 * one under test can be frozen or restarted meanwhile.
 */
let d: Deployment;
const open: SseClient[] = [];

beforeAll(async () => {
  d = await startDeployment({ webs: 2, workers: 1 });
});

afterAll(async () => {
  for (const c of open) c.close();
  await d?.close();
});

async function post(events: object[], wait = true): Promise<void> {
  const res = await fetch(`${d.baseUrls[1]}/v1/events${wait ? '?wait=true' : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  });
  expect(res.status).toBe(wait ? 200 : 202);
  await res.arrayBuffer();
}

async function board(id: string): Promise<void> {
  expect((await d.api('PUT', `/v1/boards/${id}`, { aggregation: 'sum', period: 'all' })).status).toBe(201);
}

async function memberStream(boardId: string, member: string): Promise<SseClient> {
  const client = await openSse(`${d.baseUrl}/v1/boards/${boardId}/standings/${member}/stream?period=all`, ADMIN_KEY);
  open.push(client);
  expect(client.status).toBe(200);
  return client;
}

describe('streams from real web processes', () => {
  it('coalesce several changes within an interval into one message with the latest state', async () => {
    await board('co');
    await post([{ board: 'co', member: 'ann', value: 1, idempotencyKey: 'co-1' }]);
    const s = await memberStream('co', 'ann');
    expect((await s.next()).data).toMatchObject({ rank: 1, score: 1 });
    // Frozen, the web process hears the three notices only when it goes on, all at once.
    d.webs[0]!.freeze();
    try {
      for (const [i, value] of [2, 3, 4].entries())
        await post([{ board: 'co', member: 'ann', value, idempotencyKey: `co-${i + 2}` }]);
    } finally {
      d.webs[0]!.thaw();
    }
    expect((await s.next()).data).toMatchObject({ rank: 1, score: 10 });
    await post([{ board: 'co', member: 'ann', value: 5, idempotencyKey: 'co-5' }]);
    expect((await s.next()).data).toMatchObject({ rank: 1, score: 15 });
    expect(s.messages.map((m) => [m.event, m.data.score])).toEqual([
      ['standing', 1],
      ['standing', 10],
      ['standing', 15],
    ]);
  });

  it('let clients reconnect to a restarted web process and get the current state', async () => {
    await board('re');
    await post([
      { board: 're', member: 'ann', value: 5, idempotencyKey: 're-1' },
      { board: 're', member: 'bob', value: 9, idempotencyKey: 're-2' },
    ]);
    const received: SseMessage[] = [];
    let wake = () => {};
    const source = new EventSource(`${d.baseUrl}/v1/boards/re/standings/ann/stream?period=all`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${ADMIN_KEY}` } }),
    });
    source.addEventListener('standing', (e) => {
      received.push({ event: 'standing', data: JSON.parse(e.data) });
      wake();
    });
    const nth = async (n: number) => {
      for (let i = 0; i < 300 && received.length < n; i += 1)
        await new Promise<void>((r) => ((wake = r), setTimeout(r, 100)));
      expect(received.length).toBeGreaterThanOrEqual(n);
      return received[n - 1]!;
    };
    try {
      expect((await nth(1)).data).toMatchObject({ rank: 2, score: 5 });
      const port = new URL(d.baseUrl).port;
      expect(await d.webs[0]!.stop('SIGTERM')).toBe(0);
      await post([{ board: 're', member: 'ann', value: 10, idempotencyKey: 're-3' }]);
      const web = startLaurel('web', { ...d.env, PORT: port }, 'web-1-restarted');
      d.webs.push(web);
      await waitForHttp(`${d.baseUrl}/readyz`);
      // The first message of the new connection: the state as it is now.
      expect((await nth(2)).data).toMatchObject({ rank: 1, score: 15, total: 2 });
    } finally {
      source.close();
    }
  });

  it('keep sending correct standings from Postgres while the leaderboard Redis is lost, and after it comes back empty', async () => {
    await board('lost');
    await post([
      { board: 'lost', member: 'ann', value: 3, idempotencyKey: 'lo-1' },
      { board: 'lost', member: 'bob', value: 8, idempotencyKey: 'lo-2' },
    ]);
    const s = await memberStream('lost', 'ann');
    expect((await s.next()).data).toMatchObject({ rank: 2, score: 3, source: 'cache' });
    await d.leaderboardRedis.crash();
    // Intake needs only the queue Redis; the worker commits to Postgres, then retries the projection.
    await post([{ board: 'lost', member: 'ann', value: 10, idempotencyKey: 'lo-3' }], false);
    const during = await s.nextMatching((m) => m.event === 'standing' && m.data.score === 13, 30_000);
    expect(during.data).toMatchObject({ rank: 1, score: 13, total: 2, source: 'database' });
    await d.leaderboardRedis.start();
    await post([{ board: 'lost', member: 'bob', value: 10, idempotencyKey: 'lo-4' }], false);
    const after = await s.nextMatching((m) => m.event === 'standing' && m.data.rank === 2, 30_000);
    expect(after.data).toMatchObject({ rank: 2, score: 13, total: 2 });
    expect(s.messages.filter((m) => m.event === 'standing').every((m) => m.data.member === 'ann')).toBe(true);
  });
});
