import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

/** `?metadata=true`: the metadata of the event behind each entry's current value. */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T12:00:00Z');
});
afterAll(() => h.close());

const at = (minute: number) => `2026-12-02T11:${String(minute).padStart(2, '0')}:00Z`;
const metaOf = (entries: any[]) => Object.fromEntries(entries.map((e) => [e.member, e.metadata]));

describe('entries with ?metadata=true', () => {
  it('carry the producing event: best (the best, reached first), sum (the latest counted), last (the latest)', async () => {
    for (const aggregation of ['best', 'sum', 'last'])
      await h.api('PUT', `/v1/boards/md-${aggregation}`, { aggregation });
    for (const aggregation of ['best', 'sum', 'last']) {
      await h.postEvents([
        {
          board: `md-${aggregation}`,
          member: 'a',
          value: 5,
          occurredAt: at(1),
          idempotencyKey: `md-${aggregation}-1`,
          metadata: { run: 1 },
        },
        {
          board: `md-${aggregation}`,
          member: 'a',
          value: 9,
          occurredAt: at(2),
          idempotencyKey: `md-${aggregation}-2`,
          metadata: { run: 2 },
        },
        {
          board: `md-${aggregation}`,
          member: 'a',
          value: 9,
          occurredAt: at(3),
          idempotencyKey: `md-${aggregation}-3`,
          metadata: { run: 3 },
        },
        {
          board: `md-${aggregation}`,
          member: 'a',
          value: 1,
          occurredAt: at(0),
          idempotencyKey: `md-${aggregation}-0`,
          metadata: { run: 0 },
        },
        { board: `md-${aggregation}`, member: 'b', value: 2, occurredAt: at(4), idempotencyKey: `md-${aggregation}-4` },
      ]);
    }
    const expected = { best: { run: 2 }, sum: { run: 3 }, last: { run: 3 } } as const;
    for (const aggregation of ['best', 'sum', 'last'] as const) {
      const page = await h.api('GET', `/v1/boards/md-${aggregation}/standings?metadata=true`);
      expect(page.status).toBe(200);
      expect(metaOf(page.body.entries), aggregation).toEqual({ a: expected[aggregation], b: null });
      const around = await h.api('GET', `/v1/boards/md-${aggregation}/standings/b/around?metadata=true`);
      expect(metaOf(around.body.entries)).toEqual({ a: expected[aggregation], b: null });
      const some = await h.api('GET', `/v1/boards/md-${aggregation}/standings?members=a&metadata=true`);
      expect(metaOf(some.body.entries)).toEqual({ a: expected[aggregation] });
      const following = await h.api('GET', `/v1/boards/md-${aggregation}/standings/a/following?metadata=true`);
      expect(metaOf(following.body.entries)).toEqual({ a: expected[aggregation] });
      // Without the flag, no metadata key at all.
      const plain = await h.api('GET', `/v1/boards/md-${aggregation}/standings`);
      expect(plain.body.entries.every((e: any) => !('metadata' in e))).toBe(true);
    }
    expect((await h.api('GET', '/v1/boards/md-best/standings?metadata=yes')).body.details[0].path).toBe('metadata');
  });

  it('follow a void (the recounted value) and leave with an erasure', async () => {
    await h.api('PUT', '/v1/boards/md-void', { aggregation: 'best' });
    await h.postEvents([
      { board: 'md-void', member: 'v', value: 3, occurredAt: at(1), idempotencyKey: 'mdv-1', metadata: { car: 'red' } },
      {
        board: 'md-void',
        member: 'v',
        value: 8,
        occurredAt: at(2),
        idempotencyKey: 'mdv-2',
        metadata: { car: 'blue' },
      },
      {
        board: 'md-void',
        member: 'w',
        value: 1,
        occurredAt: at(2),
        idempotencyKey: 'mdv-3',
        metadata: { car: 'green' },
      },
    ]);
    expect(metaOf((await h.api('GET', '/v1/boards/md-void/standings?metadata=true')).body.entries)).toEqual({
      v: { car: 'blue' },
      w: { car: 'green' },
    });
    expect((await h.api('POST', '/v1/events/mdv-2/void', { reason: 'test' })).status).toBe(200);
    expect(metaOf((await h.api('GET', '/v1/boards/md-void/standings?metadata=true')).body.entries)).toEqual({
      v: { car: 'red' },
      w: { car: 'green' },
    });
    const erased = await h.api('DELETE', '/v1/members/w');
    expect(erased.status).toBe(202);
    for (
      let i = 0;
      i < 300 && (await h.api('GET', `/v1/admin/erasures/${erased.body.erasureId}`)).body.state !== 'done';
      i += 1
    )
      await new Promise((r) => setTimeout(r, 50));
    expect(metaOf((await h.api('GET', '/v1/boards/md-void/standings?metadata=true')).body.entries)).toEqual({
      v: { car: 'red' },
    });
  });
});
