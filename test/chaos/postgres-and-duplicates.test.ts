import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAdminClient } from '../support/databases.js';
import { shuffle, prng } from '../support/reference.js';
import {
  CONSISTENT,
  createSumBoard,
  makeBatches,
  postSteadily,
  settleAndCheck,
  startDeployment,
  type Deployment,
} from '../support/deployment.js';

let d: Deployment;
beforeAll(async () => {
  d = await startDeployment({ workers: 2 });
});
afterAll(() => d?.close());

describe('Postgres connections and duplicate clients', () => {
  it('every Postgres connection of the service is terminated, three times, mid-stream: the jobs retry and nothing is lost or doubled', async () => {
    await createSumBoard(d, 'pg-terminated');
    const database = new URL(d.env.DATABASE_URL!).pathname.slice(1);
    const batches = makeBatches('pg-terminated', 4000, 100, 31);
    let terminated = 0;
    await postSteadily(d.baseUrl, batches, {
      paceMs: 20,
      onAccepted: async (n) => {
        if (n % 10 !== 5 || n > 25) return;
        const { rows } = await withAdminClient((c) =>
          c.query<{ n: number }>(
            `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
              WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name LIKE 'laurel%'`,
            [database],
          ),
        );
        terminated += rows[0]!.n;
      },
    });

    expect(terminated).toBeGreaterThan(0);
    expect(await settleAndCheck(d, 'pg-terminated', batches)).toMatchObject(CONSISTENT);
  });

  it('two clients post every event at once, in different orders: each is applied exactly once', async () => {
    await createSumBoard(d, 'twice');
    const batches = makeBatches('twice', 4000, 100, 32);
    // The second client cuts the same events into other batches, in another order.
    const regrouped = shuffle(batches.flat(), prng(33));
    const other = Array.from({ length: Math.ceil(regrouped.length / 37) }, (_, i) =>
      regrouped.slice(i * 37, i * 37 + 37),
    );
    await Promise.all([postSteadily(d.baseUrl, batches, { paceMs: 5 }), postSteadily(d.baseUrl, other, { paceMs: 2 })]);

    expect(await settleAndCheck(d, 'twice', batches)).toMatchObject(CONSISTENT);
  });
});
