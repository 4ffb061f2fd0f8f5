import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createSumBoard, startDeployment, type Deployment } from '../support/deployment.js';

let d: Deployment;
beforeAll(async () => {
  d = await startDeployment({ workers: 1 });
});
afterAll(() => d?.close());

interface Answer {
  key: string;
  status: number | 'network';
  message?: string;
}

describe('the queue Redis frozen mid-stream', () => {
  it('a 503 that says nothing was accepted is true: none of its events is ever applied; every 202 is applied once', async () => {
    await createSumBoard(d, 'frozen');
    const answers: Answer[] = [];
    let posting = true;
    const poster = async (client: number) => {
      for (let i = 0; posting; i += 1) {
        const key = `frozen-c${client}-e${i}`;
        const answer: Answer = await fetch(`${d.baseUrl}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ board: 'frozen', member: `m${client}`, value: 1, idempotencyKey: key }),
          signal: AbortSignal.timeout(30_000),
        }).then(
          async (r) => ({ key, status: r.status, message: ((await r.json()) as { message?: string }).message }),
          () => ({ key, status: 'network' as const }),
        );
        answers.push(answer);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const posters = Array.from({ length: 6 }, (_, c) => poster(c));
    await new Promise((r) => setTimeout(r, 1000));
    // 6 s: longer than the 3 s an add is given before intake looks for its outcome.
    d.queueRedis.freeze();
    await new Promise((r) => setTimeout(r, 6000));
    d.queueRedis.thaw();
    await new Promise((r) => setTimeout(r, 1500));
    posting = false;
    await Promise.all(posters);

    const accepted = answers.filter((a) => a.status === 202).map((a) => a.key);
    const refused = answers
      .filter((a) => a.status === 503 && /nothing was accepted/.test(a.message ?? ''))
      .map((a) => a.key);
    expect(accepted.length).toBeGreaterThan(50);
    expect(answers.filter((a) => a.status !== 202 && a.status !== 503)).toEqual([]);

    // Settled: every accepted key is in the ledger (the worker catches up after the thaw).
    const inLedger = async () =>
      new Map(
        (
          await d.pg.query<{ key: string; n: number }>(
            `SELECT idempotency_key AS key, count(*)::int AS n FROM score_events WHERE board_id = 'frozen' GROUP BY 1`,
          )
        ).rows.map((r) => [r.key, r.n]),
      );
    const deadline = Date.now() + 60_000;
    let ledger = await inLedger();
    while (accepted.some((k) => !ledger.has(k)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      ledger = await inLedger();
    }
    // Anything still queued would land by now too: give the worker a moment past the last 202.
    await new Promise((r) => setTimeout(r, 3000));
    ledger = await inLedger();
    expect(accepted.filter((k) => ledger.get(k) !== 1)).toEqual([]);
    expect(refused.filter((k) => ledger.has(k))).toEqual([]);
  });
});
