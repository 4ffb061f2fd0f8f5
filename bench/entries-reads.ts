/**
 * Read figures: `?members=` with 100 ids, a page with `?member=`, a member's goals and a
 * scope's cutoffs (5 ranks, 5 percents), each beside the member-rank route in the same run (same server, same board, same load), req/s and p99
 * with autocannon (closed loop). `measureEntriesReads` is what `npm run bench` calls on its
 * board (latest.json: query.members100Rps, query.memberPageRps, query.goalsRps, query.cutoffsRps); run alone, this file
 * creates a board of its own on a running Laurel and prints the figures:
 *
 *   BENCH_URL=http://127.0.0.1:3000 ADMIN_API_KEY=... npx tsx bench/entries-reads.ts
 *
 * (BENCH_ENTRIES_MEMBERS members, default 10,000; BENCH_SECONDS per route, default 10).
 */
import { pathToFileURL } from 'node:url';
import { http, round } from './support.js';

export interface EntriesReadsTarget {
  url: string;
  headers: Record<string, string>;
  board: string;
  period: string;
  /** Ranked member ids of the board (at least 100). */
  members: readonly string[];
  seconds: number;
  connections: number;
}

export interface EntriesReadsFigures {
  members100Rps: number;
  members100P99Ms: number;
  memberPageRps: number;
  memberPageP99Ms: number;
  goalsRps: number;
  goalsP99Ms: number;
  cutoffsRps: number;
  cutoffsP99Ms: number;
  /** The member-rank route measured in the same run, for comparison. */
  memberRankRps: number;
  memberRankP99Ms: number;
}

/** Paths spread over the board, so no single key or page is all that is read. */
function paths(t: EntriesReadsTarget) {
  const n = t.members.length;
  const q = `period=${encodeURIComponent(t.period)}`;
  const base = `/v1/boards/${t.board}/standings`;
  const members100 = Array.from({ length: 50 }, (_, k) => {
    const ids = Array.from({ length: 100 }, (_, i) => t.members[(k * 7919 + i * Math.floor(n / 100)) % n]!);
    return `${base}?${q}&members=${ids.map(encodeURIComponent).join(',')}`;
  });
  const memberPage = Array.from(
    { length: 200 },
    (_, k) =>
      `${base}?${q}&limit=50&offset=${(k * 50) % Math.max(1, n - 50)}&member=${encodeURIComponent(t.members[(k * 31) % n]!)}`,
  );
  const memberRank = Array.from(
    { length: 1000 },
    (_, k) => `${base}/${encodeURIComponent(t.members[(k * 13) % n]!)}?${q}`,
  );
  // Goals without a follow list: the entry above and the award tiers (the board's default four).
  const goals = Array.from(
    { length: 1000 },
    (_, k) => `${base}/${encodeURIComponent(t.members[(k * 17) % n]!)}/goals?${q}`,
  );
  const cutoffs = [`/v1/boards/${t.board}/cutoffs?${q}&ranks=1,10,100,1000,10000&percents=1,5,10,25,50`];
  return { members100, memberPage, memberRank, goals, cutoffs };
}

export async function measureEntriesReads(t: EntriesReadsTarget): Promise<EntriesReadsFigures> {
  if (t.members.length < 100) throw new Error('the entries reads need a board of at least 100 ranked members');
  const p = paths(t);
  const load = (list: string[]) =>
    http({ url: t.url, paths: list, headers: t.headers, seconds: t.seconds, connections: t.connections });
  // Warm-up: scripts loaded, display names cached, connections open.
  await http({
    url: t.url,
    paths: [...p.members100, ...p.memberPage, ...p.memberRank, ...p.goals, ...p.cutoffs],
    headers: t.headers,
    seconds: 1,
    connections: t.connections,
  });
  const members100 = await load(p.members100);
  const memberPage = await load(p.memberPage);
  const memberRank = await load(p.memberRank);
  const goals = await load(p.goals);
  const cutoffs = await load(p.cutoffs);
  return {
    goalsRps: goals.rps,
    goalsP99Ms: goals.p99Ms,
    cutoffsRps: cutoffs.rps,
    cutoffsP99Ms: cutoffs.p99Ms,
    members100Rps: members100.rps,
    members100P99Ms: members100.p99Ms,
    memberPageRps: memberPage.rps,
    memberPageP99Ms: memberPage.p99Ms,
    memberRankRps: memberRank.rps,
    memberRankP99Ms: memberRank.p99Ms,
  };
}

async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Alone: a board of its own on a running Laurel, filled, then measured. */
async function main(): Promise<void> {
  const url = process.env.BENCH_URL ?? 'http://127.0.0.1:3000';
  const key = process.env.ADMIN_API_KEY;
  if (!key) throw new Error('ADMIN_API_KEY must name an admin key of the Laurel at BENCH_URL');
  const count = Number(process.env.BENCH_ENTRIES_MEMBERS ?? 10_000);
  const board = `entries-bench-${Date.now().toString(36)}`;
  await call(url, key, 'PUT', `/v1/boards/${board}`, {
    aggregation: 'best',
    period: 'all',
    tieBreak: 'shared',
    subscore: { order: 'asc' },
  });
  const members = Array.from({ length: count }, (_, i) => `eb${i}`);
  for (let i = 0; i < count; i += 1000) {
    const events = members.slice(i, i + 1000).map((member, j) => ({
      board,
      member,
      value: (i + j) % 997,
      subscore: (i + j) % 13,
      idempotencyKey: `${board}-${i + j}`,
    }));
    await call(url, key, 'POST', '/v1/events', { events });
  }
  const deadline = Date.now() + 120_000;
  while ((await call(url, key, 'GET', `/v1/boards/${board}/standings?period=all&limit=1`)).total < count) {
    if (Date.now() > deadline) throw new Error('the board was not filled within 120 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  const figures = await measureEntriesReads({
    url,
    headers: { authorization: `Bearer ${key}` },
    board,
    period: 'all',
    members,
    seconds: Number(process.env.BENCH_SECONDS ?? 10),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  });
  console.log(
    JSON.stringify(
      {
        members: count,
        query: {
          ...figures,
          members100VsRank: round(figures.members100Rps / figures.memberRankRps, 2),
          goalsVsRank: round(figures.goalsRps / figures.memberRankRps, 2),
          cutoffsVsRank: round(figures.cutoffsRps / figures.memberRankRps, 2),
        },
      },
      null,
      2,
    ),
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
