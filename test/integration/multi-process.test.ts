import { beforeAll, describe, expect, it } from 'vitest';
import { startDeployment, verifyCli, ADMIN_KEY, type Deployment } from '../support/deployment.js';
import {
  prng,
  referenceStandings,
  shuffle,
  type Aggregation,
  type Order,
  type RefEvent,
  type TieBreak,
} from '../support/reference.js';

interface BoardSpec {
  id: string;
  aggregation: Aggregation;
  order: Order;
  tieBreak: TieBreak;
  categories: string[];
}

const BOARDS: BoardSpec[] = [
  { id: 'mp-sum', aggregation: 'sum', order: 'desc', tieBreak: 'member', categories: ['duel', 'squad'] },
  { id: 'mp-best', aggregation: 'best', order: 'desc', tieBreak: 'first', categories: [] },
  { id: 'mp-last', aggregation: 'last', order: 'asc', tieBreak: 'shared', categories: ['duel'] },
];

interface Posted {
  board: string;
  member: string;
  value: number;
  idempotencyKey: string;
  occurredAt: string;
  category?: string;
}

/** Events with explicit times (so "first to reach" and "last" are decided by the data), ties and repeats. */
function makeEvents(): Posted[] {
  const rand = prng(4242);
  const base = Date.now() - 3_600_000;
  const events: Posted[] = [];
  for (const board of BOARDS) {
    for (let i = 0; i < 3000; i += 1) {
      const category =
        board.categories.length && rand() < 0.7
          ? board.categories[Math.floor(rand() * board.categories.length)]
          : undefined;
      events.push({
        board: board.id,
        member: `p${String(Math.floor(rand() * 300)).padStart(3, '0')}`,
        value: Math.floor(rand() * 50),
        idempotencyKey: `${board.id}-${i}`,
        // Whole seconds, often shared, so time ties happen.
        occurredAt: new Date(base + Math.floor(rand() * 600) * 1000).toISOString(),
        ...(category ? { category } : {}),
      });
    }
  }
  return events;
}

const events = makeEvents();

async function postAll(d: Deployment, order: readonly Posted[], batchSize: number): Promise<void> {
  const batches: Posted[][] = [];
  for (let i = 0; i < order.length; i += batchSize) batches.push(order.slice(i, i + batchSize));
  // Every web process takes a share, all at once.
  await Promise.all(
    d.baseUrls.map(async (url, w) => {
      for (let b = w; b < batches.length; b += d.baseUrls.length) {
        const res = await fetch(`${url}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events: batches[b] }),
        });
        if (res.status !== 202) throw new Error(`batch ${b} answered ${res.status}: ${await res.text()}`);
      }
    }),
  );
}

async function settle(d: Deployment): Promise<void> {
  for (let i = 0; i < 240; i += 1) {
    const { rows } = await d.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM score_events');
    if (rows[0]!.n >= events.length) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('events did not all reach the ledger');
}

type Entry = [rank: number, member: string, score: number];

/** Every scope of every board, as served over HTTP. */
async function servedStandings(d: Deployment): Promise<Record<string, Entry[]>> {
  const out: Record<string, Entry[]> = {};
  for (const board of BOARDS) {
    for (const category of ['all', ...board.categories]) {
      const entries: Entry[] = [];
      for (let offset = 0; ; offset += 200) {
        const res = await d.api(
          'GET',
          `/v1/boards/${board.id}/standings?period=all&category=${category}&limit=200&offset=${offset}`,
        );
        expect(res.status).toBe(200);
        entries.push(
          ...(res.body.entries as Array<{ rank: number; member: string; score: number }>).map((e): Entry => [
            e.rank,
            e.member,
            e.score,
          ]),
        );
        if (entries.length >= res.body.total) break;
      }
      out[`${board.id}/${category}`] = entries;
    }
  }
  return out;
}

function referenceAll(): Record<string, Entry[]> {
  const out: Record<string, Entry[]> = {};
  for (const board of BOARDS) {
    const ref: RefEvent[] = events
      .filter((e) => e.board === board.id)
      .map((e) => ({
        key: e.idempotencyKey,
        member: e.member,
        units: e.value,
        atMs: Date.parse(e.occurredAt),
        category: e.category,
      }));
    for (const category of ['all', ...board.categories]) {
      out[`${board.id}/${category}`] = referenceStandings(ref, board, category === 'all' ? undefined : category).map(
        (s): Entry => [s.rank, s.member, s.units],
      );
    }
  }
  return out;
}

async function runThrough(options: Parameters<typeof startDeployment>[0], order: readonly Posted[], batchSize: number) {
  const d = await startDeployment(options);
  try {
    for (const board of BOARDS) {
      const { id, ...definition } = board;
      expect((await d.api('PUT', `/v1/boards/${id}`, { ...definition, period: 'all' })).status).toBe(201);
    }
    await postAll(d, order, batchSize);
    await settle(d);
    let verified = await verifyCli(d);
    for (let i = 0; !verified.ok && i < 20; i += 1) {
      await new Promise((r) => setTimeout(r, 500));
      verified = await verifyCli(d);
    }
    expect(verified.output).toMatch(/no difference/);
    return await servedStandings(d);
  } finally {
    await d.close();
  }
}

let single: Record<string, Entry[]>;
let many: Record<string, Entry[]>;
beforeAll(async () => {
  // The same events: in order through one process, shuffled through 2 webs and 3 workers.
  single = await runThrough({ allInOne: true }, events, 250);
  many = await runThrough({ webs: 2, workers: 3 }, shuffle(events, prng(7)), 97);
}, 240_000);

describe('several web and worker processes at once', () => {
  it('serve exactly the standings one process serves, and both equal the reference', () => {
    const expected = referenceAll();
    expect(Object.keys(single).sort()).toEqual(Object.keys(expected).sort());
    for (const scope of Object.keys(expected)) {
      expect(single[scope], scope).toEqual(expected[scope]);
      expect(many[scope], scope).toEqual(single[scope]);
    }
  });
});
