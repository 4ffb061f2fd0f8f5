import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  CONSISTENT,
  createSumBoard,
  makeBatches,
  settleAndCheck,
  startDeployment,
  type Deployment,
  type StreamEvent,
} from '../support/deployment.js';

let d: Deployment;
beforeAll(async () => {
  // Two web processes: the clients' retries go to the one left standing.
  d = await startDeployment({ webs: 2, workers: 1 });
});
afterAll(() => d?.close());

type Answer = number | 'network' | 'not sent';

async function post(baseUrl: string, event: StreamEvent): Promise<Answer> {
  return fetch(`${baseUrl}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(event),
    signal: AbortSignal.timeout(10_000),
  }).then(
    async (r) => (await r.arrayBuffer(), r.status),
    () => 'network' as const,
  );
}

describe('a web process is SIGKILLed while intake groups form and are added', () => {
  it('applies every event answered 202 exactly once; a request left unanswered is retried elsewhere as a duplicate', async () => {
    await createSumBoard(d, 'web-crash');
    // One-event requests from 48 game servers at once, so the first web process always has
    // groups forming and adds in flight; each server retries an unanswered request with the
    // same key on the other web process, as a client behind a load balancer would.
    const events = makeBatches('web-crash', 4800, 1, 21).map(([e]) => e!);
    const answeredByFirst = new Set<string>();
    let unanswered = 0;
    let next = 0;
    let killed = false;
    const servers = Array.from({ length: 48 }, async () => {
      while (next < events.length) {
        const event = events[next++]!;
        const first: Answer = killed ? 'not sent' : await post(d.baseUrls[0]!, event);
        if (first === 202) {
          answeredByFirst.add(event.idempotencyKey);
          continue;
        }
        if (!killed) throw new Error(`intake answered ${first} before the crash`);
        if (first === 'network') unanswered += 1;
        for (let attempt = 0; ; attempt += 1) {
          const retry = await post(d.baseUrls[1]!, event);
          if (retry === 202) break;
          if (attempt > 100) throw new Error(`a retry was answered ${retry}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    });
    // The crash, once the first web process has accepted a good part of the stream.
    const crash = (async () => {
      while (answeredByFirst.size < 1500) await new Promise((r) => setTimeout(r, 5));
      killed = true;
      await d.webs[0]!.stop('SIGKILL');
    })();
    await Promise.all([...servers, crash]);
    await d.restartWeb(0);
    // Requests were in flight at the kill: their groups were forming, or being added.
    expect(unanswered).toBeGreaterThan(0);

    expect(await settleAndCheck(d, 'web-crash', [events])).toMatchObject(CONSISTENT);
    const { rows } = await d.pg.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM score_events WHERE board_id = $1 AND idempotency_key = ANY($2)',
      ['web-crash', [...answeredByFirst]],
    );
    expect(rows[0]!.n).toBe(answeredByFirst.size);
  });
});
