/**
 * Reads of a retired closed period (answered from period_results) on a generated
 * 1,000,000-member period, on a database of its own: EXPLAIN ANALYZE of each query the
 * final-results repository sends, and the median wall time of 20 calls each; the summary
 * goes to bench/results/final-results.json.
 * Usage: npx tsx bench/final-results.ts [members]
 */
import pg from 'pg';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import type { Database } from '../src/storage/postgres/schema.js';
import { migrateDatabase } from '../src/storage/postgres/migrator.js';
import { findBoard } from '../src/storage/postgres/boards-repository.js';
import {
  resultOfMember,
  resultsAround,
  resultsOfMemberMany,
  resultsOfMembers,
  resultsPage,
} from '../src/storage/postgres/final-results-repository.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { quantile, ROOT, round } from './support.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const members = Number(process.argv[2] ?? 1_000_000);
const name = `laurel_finalresults${Date.now().toString(36)}`;
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
await admin.query(`CREATE DATABASE "${name}"`);
try {
  await migrateDatabase(url.toString());
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  await pool.query(`INSERT INTO boards (id, display_name, aggregation, sort_order, tie_break, period_kind, timezone, decimals, grace_seconds, awards)
                    VALUES ('big', 'big', 'best', 'desc', 'shared', 'month', 'UTC', 0, 0, '{}')`);
  await pool.query(
    `INSERT INTO periods (board_id, key, starts_at, ends_at, state, closed_at) VALUES ('big', '2026-11', '2026-11-01', '2026-12-01', 'closed', '2026-12-01')`,
  );
  const started = Date.now();
  // Every fourth member shares the previous one's value: shared ranks as a `shared` board stores them.
  await pool.query(
    `INSERT INTO period_results (board_id, period_key, category, region, position, rank, member_id, value)
     SELECT 'big', '2026-11', 'all', 'world', i, i - (i % 4 = 0)::int, 'm' || lpad(i::text, 7, '0'), 2000000 - i + (i % 4 = 0)::int
       FROM generate_series(1, $1) i`,
    [members],
  );
  await pool.query('ANALYZE period_results');
  console.log(`filled ${members} rows in ${Date.now() - started} ms`);

  const captured: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (e) => {
      if (e.level === 'query') captured.push(e.query);
    },
  });
  const scope = { board: (await findBoard(db, 'big'))!, period: '2026-11', category: 'all', region: 'world' };
  const mid = `m${String(Math.floor(members / 2)).padStart(7, '0')}`;
  const some = Array.from(
    { length: 1000 },
    (_, i) => `m${String(1 + Math.floor((i * members) / 1000)).padStart(7, '0')}`,
  );
  const cases: Record<string, () => Promise<unknown>> = {
    'page (offset 0, limit 50)': () => resultsPage(db, scope, 0, 50),
    'page (offset 900000, limit 200)': () => resultsPage(db, scope, Math.min(900_000, members - 200), 200),
    member: () => resultOfMember(db, scope, mid),
    'around (radius 50)': () => resultsAround(db, scope, mid, 50),
    'following (1000 members)': () => resultsOfMembers(db, scope, some),
    'member across boards (20 boards)': () =>
      resultsOfMemberMany(
        db,
        Array.from({ length: 20 }, () => ({ ...scope, member: mid })),
      ),
  };
  const report: Record<string, unknown> = {};
  for (const [label, run] of Object.entries(cases)) {
    captured.length = 0;
    await run();
    const q = captured[0]!;
    const { rows } = await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, [...q.parameters]);
    // A 1000-id array would fill the screen: plan lines are cut short.
    const plan = rows.map((r) => (r['QUERY PLAN'] as string).slice(0, 240));
    const times: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const t = process.hrtime.bigint();
      await run();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    report[label] = {
      medianMs: round(
        quantile(
          times.sort((x, y) => x - y),
          0.5,
        ),
      ),
      p90Ms: round(quantile(times, 0.9)),
      execution: plan.find((l) => l.startsWith('Execution Time')),
    };
    console.log(
      `\n== ${label}: median ${round(
        quantile(
          times.sort((x, y) => x - y),
          0.5,
        ),
      )} ms\n${plan.join('\n')}`,
    );
  }
  console.log(JSON.stringify(report, null, 2));
  writeFileSync(
    path.join(ROOT, 'bench/results/final-results.json'),
    `${JSON.stringify({ members, measuredAt: new Date().toISOString(), report }, null, 2)}\n`,
  );
  await db.destroy();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
