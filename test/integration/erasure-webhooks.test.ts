import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePeriod } from '../../src/services/period-closing.js';
import { deliverWebhook } from '../../src/services/webhook-delivery.js';
import { createHarness, type Harness } from '../support/harness.js';

/** A receiver that fails every delivery until told to take them, then keeps what it took. */
function startReceiver() {
  const state = { accept: false, attempts: 0, bodies: [] as string[] };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      state.attempts += 1;
      if (!state.accept) return void res.writeHead(500).end();
      state.bodies.push(raw);
      res.writeHead(204).end();
    });
  });
  return new Promise<{ server: Server; url: string; state: typeof state }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, state }),
    ),
  );
}

const until = async (what: string, done: () => Promise<boolean> | boolean, ms = 20_000) => {
  for (const started = Date.now(); !(await done()); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
};

describe('webhooks after an erasure', () => {
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    h = await createHarness({ env: { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: 'erasure-webhook-secret-5b1e' } });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((r) => receiver.server.close(r));
  });

  /** Every webhook job, in every state, that names the member. */
  const jobsNaming = async (member: string) =>
    (await h.ctx.webhooksQueue.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active', 'prioritized'])).filter(
      (job) => job && JSON.stringify(job.data).includes(member),
    );

  it('sends no report of an erased member, pending or retried, and keeps none of theirs', async () => {
    h.clock.set('2026-11-20T12:00:00Z');
    expect((await h.api('PUT', '/v1/boards/wh', { aggregation: 'sum', period: 'month' })).status).toBe(201);
    await h.postEvents([
      { board: 'wh', member: 'ghost', value: 50, idempotencyKey: 'wh-1' },
      { board: 'wh', member: 'alive', value: 10, idempotencyKey: 'wh-2' },
    ]);
    h.clock.set('2026-12-01T00:10:00Z');
    expect(await closePeriod(h.ctx, (await h.ctx.boards.get('wh'))!, '2026-11')).toBe(true);
    // The receiver fails: the reports wait for their retries.
    await until('a failed attempt at ghost', async () => receiver.state.attempts >= 3);
    const ghostReport = (await jobsNaming('ghost')).map((job) => job.data);
    expect(ghostReport.map((job) => [job.type, job.data.member, job.data.rank])).toEqual([
      ['member.period_report', 'ghost', 1],
    ]);

    const erased = await h.api('DELETE', '/v1/members/ghost');
    expect(erased.status).toBe(202);
    await until('the erasure', async () => {
      const res = await h.api('GET', `/v1/admin/erasures/${erased.body.erasureId}`);
      return res.body.state === 'done';
    });
    expect(await jobsNaming('ghost')).toEqual([]);

    receiver.state.accept = true;
    await until('the other deliveries', () => receiver.state.bodies.length >= 2);
    const types = receiver.state.bodies.map((b) => JSON.parse(b) as { type: string; data: { member?: string } });
    expect(types.map((b) => [b.type, b.data.member ?? null]).sort()).toEqual([
      ['member.period_report', 'alive'],
      ['period.closed', null],
    ]);
    // A delivery the erasure could not remove (it was being sent) sends nothing on its retry.
    const before = receiver.state.attempts;
    expect(await deliverWebhook(h.ctx, ghostReport[0]!)).toEqual({ status: 0 });
    expect(receiver.state.attempts).toBe(before);
    await h.drain();
    expect(receiver.state.bodies.join('\n')).not.toContain('ghost');
    expect(await jobsNaming('ghost')).toEqual([]);
  });
});
