/**
 * The Postgres fallback of standings reads on a 1M-member board whose leaderboard Redis keys
 * are gone: member rank, top-50 and around (radius 5), p50 and p99, one read at a time,
 * through the standings services (the same path a request takes behind HTTP).
 *
 *   npx tsx bench/fallback-reads.ts            (FALLBACK_BENCH_MEMBERS=n for another size)
 *
 * FALLBACK_BENCH_EXPLAIN=1 also prints each read's EXPLAIN (ANALYZE, BUFFERS), planned with
 * the fallback pool's session settings.
 *
 * Exported for bench/run.ts. The board is written with SQL (generate_series), members,
 * aggregates and the matching ledger rows, in a database of its own that is dropped after.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { parseEnv } from '../src/config/env.js';
import { createContext, type AppContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { migrateDatabase } from '../src/storage/postgres/migrator.js';
import { keysOfPrefix, unlinkMatching } from '../src/storage/redis/maintenance.js';
import { putBoard } from '../src/services/boards-service.js';
import { aroundMember, memberStanding, standingsPage } from '../src/services/standings-service.js';
import { FALLBACK_SESSION_SETTINGS } from '../src/storage/postgres/fallback-reads.js';
import type { Database } from '../src/storage/postgres/schema.js';
import { aroundInScope, placeInScope, rankScope } from '../src/storage/postgres/standings-repository.js';
import type { Board } from '../src/domain/board.js';
import { hashedKeySql } from '../src/storage/postgres/functions/key-hash.js';
import { quantile, round } from './support.js';

export interface FallbackReadsResult {
  rankP50Ms: number;
  rankP99Ms: number;
  top50P50Ms: number;
  top50P99Ms: number;
  aroundP50Ms: number;
  aroundP99Ms: number;
}

export interface FallbackBenchOptions {
  adminDatabaseUrl?: string;
  redisUrl?: string;
  members?: number;
  /** Reads of each kind measured (after a few unmeasured ones). */
  samples?: number;
}

const BOARD = 'fallback';
/** A member in this many is excluded: the reads must leave them out, at their cost. */
const EXCLUDED_EVERY = 10_000;

/** Every fifth member ties with four others on value; the tie rule then decides by second and id. */
async function seed(db: pg.Pool, n: number): Promise<void> {
  await db.query(`INSERT INTO members (id, excluded_at)
    SELECT 'm' || g, CASE WHEN g % ${EXCLUDED_EVERY} = 0 THEN now() END FROM generate_series(1, ${n}) g`);
  await db.query(
    `INSERT INTO score_event_keys (idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at)
     SELECT ${hashedKeySql("'k' || g")}, 'h', $1, 'all', 'm' || g, 'all', timestamptz '2026-01-01' + make_interval(secs => g % 86400) FROM generate_series(1, ${n}) g`,
    [BOARD],
  );
  await db.query(
    `INSERT INTO score_events (board_id, period_key, member_id, category, value, occurred_at, received_at, applied_at, idempotency_key, payload_hash, status)
     SELECT $1, 'all', 'm' || g, 'all', (g::bigint * 7919) % ${Math.max(1, Math.floor(n / 5))}, timestamptz '2026-01-01' + make_interval(secs => g % 86400),
            now(), now(), 'k' || g, 'h', 'applied'
       FROM generate_series(1, ${n}) g`,
    [BOARD],
  );
  await db.query(
    `INSERT INTO member_aggregates (board_id, period_key, category, member_id, value, reached_at, last_key, event_count)
     SELECT board_id, period_key, category, member_id, value, occurred_at, idempotency_key, 1 FROM score_events WHERE board_id = $1`,
    [BOARD],
  );
  // What autovacuum does soon after a bulk write; it also sets the visibility map, which the
  // fallback's index-only counts rely on.
  await db.query('VACUUM (ANALYZE) member_aggregates, members');
}

async function timed(samples: number, read: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 5; i++) await read(-1 - i);
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    await read(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: round(quantile(ms, 0.5), 1), p99: round(quantile(ms, 0.99), 1) };
}

async function measure(ctx: AppContext, n: number, samples: number): Promise<FallbackReadsResult> {
  // Spread over the whole ranking, so ranks near the end (the longest counts) are in the sample.
  const member = (i: number) => `m${1 + ((Math.abs(i) * 104_729) % n)}`;
  const query = { period: 'all' };
  const check = await memberStanding(ctx, BOARD, member(1), query);
  if (check.source !== 'database') throw new Error(`the fallback bench read came from ${check.source}`);
  const rank = await timed(samples, (i) => memberStanding(ctx, BOARD, member(i), query));
  const top50 = await timed(samples, () => standingsPage(ctx, BOARD, { ...query, limit: '50' }));
  const around = await timed(samples, (i) => aroundMember(ctx, BOARD, member(i), { ...query, radius: '5' }));
  return {
    rankP50Ms: rank.p50,
    rankP99Ms: rank.p99,
    top50P50Ms: top50.p50,
    top50P99Ms: top50.p99,
    aroundP50Ms: around.p50,
    aroundP99Ms: around.p99,
  };
}

/** Each fallback statement run once more under EXPLAIN (ANALYZE, BUFFERS), printed. */
async function explainReads(url: string, board: Board, n: number): Promise<void> {
  const options = Object.entries(FALLBACK_SESSION_SETTINGS)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  const pool = new pg.Pool({ connectionString: url, max: 1, options });
  pool.on('error', () => undefined);
  let last: CompiledQuery | undefined;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (e) => void (e.level === 'query' && (last = e.query)),
  });
  const scope = { board, period: 'all', category: 'all', region: 'world' };
  const middle = `m${Math.floor(n / 2) + 1}`;
  const reads: Array<[string, () => Promise<unknown>]> = [
    [`rank of ${middle}`, () => placeInScope(db, scope, middle)],
    ['top-50', () => rankScope(db, scope, { offset: 0, limit: 50 })],
    [`around ${middle}, radius 5`, () => aroundInScope(db, scope, middle, 5)],
    [`page at offset ${Math.floor(n / 2)}`, () => rankScope(db, scope, { offset: Math.floor(n / 2), limit: 50 })],
    ['page past the end', () => rankScope(db, scope, { offset: n + 10, limit: 50 })],
  ];
  try {
    for (const [label, read] of reads) {
      await read();
      const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${last!.sql}`, [
        ...last!.parameters,
      ]);
      process.stdout.write(`\n== ${label}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
    }
  } finally {
    await db.destroy();
  }
}

export async function fallbackReadsBench(options: FallbackBenchOptions = {}): Promise<FallbackReadsResult> {
  const adminUrl =
    options.adminDatabaseUrl ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = options.redisUrl ?? process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
  const n = options.members ?? 1_000_000;
  const tag = `fb${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/laurel_${tag}`;
  const admin = new pg.Pool({ connectionString: adminUrl, max: 1 });
  await admin.query(`CREATE DATABASE "laurel_${tag}"`);
  const db = new pg.Pool({ connectionString: url.toString(), max: 2 });
  let ctx: AppContext | undefined;
  try {
    await migrateDatabase(url.toString());
    ctx = createContext(
      parseEnv({
        DATABASE_URL: url.toString(),
        REDIS_URL: redisUrl,
        REDIS_PREFIX: tag,
        ADMIN_API_KEY: randomBytes(24).toString('hex'),
      }),
      {
        log: createLogger('silent'),
        name: 'laurel-bench-fallback',
      },
    );
    await putBoard(ctx, BOARD, { aggregation: 'best', tieBreak: 'first', period: 'all' });
    await db.query(
      "INSERT INTO periods (board_id, key, starts_at) VALUES ($1, 'all', '2000-01-01') ON CONFLICT DO NOTHING",
      [BOARD],
    );
    await seed(db, n);
    // No leaderboard key was ever written: every read is a miss, answered from Postgres.
    const result = await measure(ctx, n, options.samples ?? 200);
    if (process.env.FALLBACK_BENCH_EXPLAIN === '1')
      await explainReads(url.toString(), (await ctx.boards.get(BOARD))!, n);
    return result;
  } finally {
    await ctx?.close();
    await db.end();
    if (process.env.FALLBACK_BENCH_KEEP !== '1')
      await admin.query(`DROP DATABASE IF EXISTS "laurel_${tag}" WITH (FORCE)`);
    else process.stdout.write(`kept database laurel_${tag}\n`);
    await admin.end();
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl);
    await unlinkMatching(redis, keysOfPrefix(tag));
    redis.disconnect();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const members = Number(process.env.FALLBACK_BENCH_MEMBERS ?? 1_000_000);
  const started = performance.now();
  const result = await fallbackReadsBench({ members });
  process.stdout.write(
    `${JSON.stringify({ members, ...result, seconds: round((performance.now() - started) / 1000, 1), loadAverage: os.loadavg().map((l) => round(l, 2)) }, null, 2)}\n`,
  );
}
