import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { postAndWait } from '../support/wait-results.js';
import { prng, shuffle, type RefEvent } from '../support/reference.js';
import { referenceLeague } from '../support/league-reference.js';
import { runTick } from '../../src/services/period-tick.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-05T12:00:00Z');
});
afterAll(() => h.close());

const league = { tiers: ['low', 'mid', 'top'], bucketSize: 3, promote: 1, relegate: 1, startTier: 'mid' };
const MAX_MEMBERS = 7;
const MAX_ATTEMPTS = 3;

/**
 * Entry (maxMembers) and league placement depend on the order batches are applied (docs/design/leagues.md)
 * and on nothing else: not on the order of events inside a batch. Attempts and
 * standings are order-free. Each run shuffles the events, splits them into batches at random
 * and compares entrants, statuses, every bucket's standings and, after the close, every tier
 * with the reference applied to that same split.
 */
describe('entrants, attempts and league placement against the reference, for any order and batch split', () => {
  it('gives the reference entrants, buckets, standings and promotions', async () => {
    const rand = prng(22_0912);
    const members = Array.from({ length: 10 }, (_, i) => `m${i}`);
    const events: RefEvent[] = Array.from({ length: 36 }, (_, i) => ({
      key: `e${String.fromCharCode(97 + (i % 7))}${i}`,
      member: members[Math.floor(rand() * members.length)]!,
      units: Math.floor(rand() * 30),
      // Few distinct times: order among equal times falls to the key.
      atMs: Date.parse('2026-12-05T08:00:00Z') + Math.floor(rand() * 6) * 60_000,
    }));
    const runs: Array<{ board: string; expected: ReturnType<typeof referenceLeague> }> = [];
    for (let run = 0; run < 5; run += 1) {
      const board = `prop-${run}`;
      await h.api('PUT', `/v1/boards/${board}`, {
        aggregation: 'sum',
        period: 'day',
        maxMembers: MAX_MEMBERS,
        maxAttempts: MAX_ATTEMPTS,
        league,
      });
      const order = shuffle(events, rand);
      const batches: RefEvent[][] = [];
      for (let i = 0; i < order.length;) {
        const size = run === 0 ? order.length : 1 + Math.floor(rand() * 10);
        batches.push(order.slice(i, i + size));
        i += size;
      }
      for (const batch of batches) {
        await postAndWait(
          h,
          batch.map((e) => ({
            board,
            member: e.member,
            value: e.units,
            idempotencyKey: `${board}.${e.key}`,
            occurredAt: new Date(e.atMs).toISOString(),
          })),
        );
      }
      const expected = referenceLeague(batches, MAX_MEMBERS, MAX_ATTEMPTS, league);
      runs.push({ board, expected });

      const entrants = (await h.api('GET', `/v1/boards/${board}/entrants?limit=100`)).body.entrants.map(
        (e: { member: string }) => e.member,
      );
      expect(entrants, board).toEqual(expected.entrants);
      const counted = new Set(expected.counted.map((e) => e.key));
      const statuses = await Promise.all(
        events.map(async (e) => {
          const { status, reason } = (await h.api('GET', `/v1/events/${board}.${e.key}`)).body;
          return reason ? `${status}:${reason}` : status;
        }),
      );
      expect(statuses, board).toEqual(
        events.map((e) =>
          counted.has(e.key)
            ? 'applied'
            : expected.entrants.includes(e.member)
              ? 'rejected:attempts_exhausted'
              : 'rejected:board_full',
        ),
      );
      for (const [bucket, standings] of expected.buckets) {
        const body = (await h.api('GET', `/v1/boards/${board}/league/${bucket}`)).body;
        expect(
          body.entries.map((e: { rank: number; member: string; score: number }) => [e.rank, e.member, e.score]),
          `${board} ${bucket}`,
        ).toEqual(standings.map((s) => [s.rank, s.member, s.units]));
      }
      expect(
        (await h.api('GET', `/v1/boards/${board}/league/mid-${expected.buckets.size + 1}`)).body.total,
        board,
      ).toBe(0);
    }

    // The next day: its first batches arrive inside the 5th's grace, so placement waits for the close.
    const nextDay: RefEvent[] = Array.from({ length: 30 }, (_, i) => ({
      key: `n${String.fromCharCode(97 + (i % 5))}${i}`,
      member: members[Math.floor(rand() * members.length)]!,
      units: Math.floor(rand() * 30),
      atMs: Date.parse('2026-12-06T00:00:00Z') + Math.floor(rand() * 4) * 30_000,
    }));
    const splits = runs.map(() => {
      const order = shuffle(nextDay, rand);
      const batches: RefEvent[][] = [];
      for (let i = 0; i < order.length;) {
        const size = 1 + Math.floor(rand() * 4);
        batches.push(order.slice(i, i + size));
        i += size;
      }
      // Most batches wait, so the close's order (first events) differs from the batches' order.
      return { batches, waiting: Math.ceil(batches.length * (0.4 + rand() * 0.5)) };
    });
    const post = (board: string, batch: readonly RefEvent[]) =>
      postAndWait(
        h,
        batch.map((e) => ({
          board,
          member: e.member,
          value: e.units,
          idempotencyKey: `${board}.${e.key}`,
          occurredAt: new Date(e.atMs).toISOString(),
        })),
      );
    h.clock.set('2026-12-06T00:02:00Z');
    for (const [i, { board }] of runs.entries())
      for (const batch of splits[i]!.batches.slice(0, splits[i]!.waiting)) await post(board, batch);

    h.clock.set('2026-12-06T00:06:00Z');
    await runTick(h.ctx);
    for (const { board, expected } of runs) {
      for (const member of expected.entrants) {
        const { leagues } = (await h.api('GET', `/v1/members/${member}/leagues`)).body;
        expect(
          leagues.find((l: { board: string }) => l.board === board),
          `${board} ${member}`,
        ).toEqual({ board, tier: expected.nextTier.get(member) });
      }
    }

    for (const [i, { board, expected }] of runs.entries()) {
      const { batches, waiting } = splits[i]!;
      for (const batch of batches.slice(waiting)) await post(board, batch);
      const next = referenceLeague(batches, MAX_MEMBERS, MAX_ATTEMPTS, league, { tierOf: expected.nextTier, waiting });
      const entrants = (await h.api('GET', `/v1/boards/${board}/entrants?limit=100`)).body.entrants.map(
        (e: { member: string }) => e.member,
      );
      expect(entrants, `${board} next day`).toEqual(next.entrants);
      for (const [bucket, standings] of next.buckets) {
        const body = (await h.api('GET', `/v1/boards/${board}/league/${bucket}`)).body;
        expect(
          body.entries.map((e: { rank: number; member: string; score: number }) => [e.rank, e.member, e.score]),
          `${board} next day ${bucket} (${waiting} of ${batches.length} batches waited)`,
        ).toEqual(standings.map((s) => [s.rank, s.member, s.units]));
      }
    }
  });
});
