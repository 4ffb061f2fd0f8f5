import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startDeployment, type Deployment } from '../support/deployment.js';

const TEN_MINUTES = 10 * 60_000;
let d: Deployment;
let fast: Awaited<ReturnType<Deployment['startWorker']>>;
beforeAll(async () => {
  // The web host's clock is 10 minutes slow; one worker host's 10 minutes fast, the other's right.
  d = await startDeployment({ workers: 0, webEnv: { LAUREL_CLOCK_OFFSET_MS: String(-TEN_MINUTES) } });
  fast = await d.startWorker({ LAUREL_CLOCK_OFFSET_MS: String(TEN_MINUTES) }, 'worker-fast');
  await d.startWorker({}, 'worker-right');
});
afterAll(() => d?.close());

describe("hosts whose clocks are off: one clock (Postgres') decides", () => {
  it('a tournament ends on time: every event before its end is accepted and applied, then it closes once', async () => {
    const endsAt = new Date(Date.now() + 20_000);
    const created = await d.api('PUT', '/v1/boards/skewed', {
      aggregation: 'sum',
      period: 'all',
      graceSeconds: 0,
      window: { endsAt: endsAt.toISOString() },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const answers: Array<{ key: string; status: number; body: string }> = [];
    for (let i = 0; Date.now() < endsAt.getTime() - 2000; i += 1) {
      const key = `skewed-${i}`;
      const res = await fetch(`${d.baseUrl}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          board: 'skewed',
          member: `m${i % 5}`,
          value: 1,
          idempotencyKey: key,
          occurredAt: new Date().toISOString(),
        }),
      });
      answers.push({ key, status: res.status, body: await res.text() });
      await new Promise((r) => setTimeout(r, 400));
    }
    expect(answers.filter((a) => a.status !== 202)).toEqual([]);

    // Closed by the worker whose clock is right, after the end and not before.
    const deadline = Date.now() + 90_000;
    let period: { state: string; closed_at: Date | null } | undefined;
    while (Date.now() < deadline) {
      period = (
        await d.pg.query<{ state: string; closed_at: Date | null }>(
          `SELECT state, closed_at FROM periods WHERE board_id = 'skewed' AND key = 'all'`,
        )
      ).rows[0];
      if (period?.state === 'closed') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(period?.state).toBe('closed');
    expect(period!.closed_at!.getTime()).toBeGreaterThanOrEqual(endsAt.getTime());

    const { rows } = await d.pg.query<{ status: string; n: number }>(
      `SELECT 'applied' AS status, count(*)::int AS n FROM score_events WHERE board_id = 'skewed'
       UNION ALL SELECT reason, count(*)::int FROM rejections WHERE board_id = 'skewed' GROUP BY reason`,
    );
    expect(rows).toEqual([{ status: 'applied', n: answers.length }]);
    // The fast host measured its skew, said so, and closed nothing.
    expect(fast.logs.some((l) => l.msg?.includes("clock is off from Postgres'"))).toBe(true);
    expect(JSON.stringify(fast.logs)).toContain('too far from Postgres');
  }, 150_000);
});
