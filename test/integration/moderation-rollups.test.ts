import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeRollups } from '../../src/services/rollups.js';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('rollups count moderation', () => {
  it('per board and period: exclusions, restores, voids and erasures, which outlive the erased member', async () => {
    h.clock.set('2026-12-02T10:15:00Z');
    for (const board of ['mod-a', 'mod-b']) await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum' });
    await h.postEvents([
      { board: 'mod-a', member: 'x', value: 1, idempotencyKey: 'mod-1' },
      { board: 'mod-b', member: 'x', value: 1, idempotencyKey: 'mod-2' },
      { board: 'mod-a', member: 'y', value: 1, idempotencyKey: 'mod-3' },
      { board: 'mod-a', member: 'y', value: 2, idempotencyKey: 'mod-4' },
    ]);
    expect((await h.api('POST', '/v1/members/x/exclusion', { reason: 'test' })).status).toBe(200);
    // Excluding an excluded member changes nothing, and is not counted again.
    expect((await h.api('POST', '/v1/members/x/exclusion', { reason: 'again' })).status).toBe(200);
    expect((await h.api('DELETE', '/v1/members/x/exclusion')).status).toBe(200);
    expect((await h.api('POST', '/v1/events/mod-4/void', { reason: 'test' })).status).toBe(200);
    h.clock.set('2026-12-02T11:05:00Z');
    const erased = await h.api('DELETE', '/v1/members/y');
    expect(erased.status).toBe(202);
    await until(
      'the erasure',
      async () =>
        (await h.api('GET', `/v1/admin/erasures/${erased.body.erasureId}`)).body.state === 'done' ? true : undefined,
      {
        timeoutMs: 30_000,
      },
    );

    await computeRollups(h.ctx);
    const res = await h.api('GET', '/v1/admin/stats?from=2026-12-02T00:00:00Z&to=2026-12-03T00:00:00Z');
    expect(res.status).toBe(200);
    const rows = res.body.rollups
      .filter((r: any) => r.board.startsWith('mod-'))
      .map((r: any) => [r.board, r.period, r.hour.slice(11, 13), r.moderation]);
    expect(rows).toEqual([
      ['mod-a', '2026-12', '10', { exclusions: 1, restores: 1, voids: 1, erasures: 0 }],
      ['mod-b', '2026-12', '10', { exclusions: 1, restores: 1, voids: 0, erasures: 0 }],
      ['mod-a', '2026-12', '11', { exclusions: 0, restores: 0, voids: 0, erasures: 1 }],
    ]);
  });
});
