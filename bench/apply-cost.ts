/**
 * What the ingest SQL costs per call and per event, beside the raw insert of the same rows:
 * times laurel_apply_batch (through applyBatch, as the worker calls it) for batches of 1, 10,
 * 100 and 1000 fresh events over a 50,000-member pool, each followed by a plain INSERT of the
 * same rows, on a database of its own; a call's fixed cost is what the small sizes show.
 * Postgres-side self times come from pg_stat_user_functions (track_functions = all).
 * Usage: npx tsx bench/apply-cost.ts [batches of 1000] [sizes, e.g. 1,10,100,1000]
 * (APPLY_COST_EXPLAIN_SIZE: the size of the one call explained statement by statement, with its
 * buffer accesses and trigger calls)
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../src/storage/postgres/schema.js';
import { migrateDatabase } from '../src/storage/postgres/migrator.js';
import { createContext } from '../src/context.js';
import { parseEnv } from '../src/config/env.js';
import { putBoard } from '../src/services/boards-service.js';
import { applyBatch, type RoutedEvent } from '../src/storage/postgres/events-repository.js';
import { quantile, round } from './support.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const batches = Number(process.argv[2] ?? 20);
const sizes = (process.argv[3] ?? '1,10,100,1000').split(',').map(Number);
const tag = `applycost${Date.now().toString(36)}`;
const url = new URL(ADMIN_URL);
url.pathname = `/laurel_${tag}`;
const dbUrl = url.toString();
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
await admin.query(`CREATE DATABASE "laurel_${tag}"`);
try {
  await migrateDatabase(dbUrl);
  // Before any session opens: function timings for every session of this database.
  await admin.query(`ALTER DATABASE "laurel_${tag}" SET track_functions = 'all'`);
  const raw = new pg.Pool({ connectionString: dbUrl, max: 1 });
  await raw.query('CREATE TABLE raw_events (key text PRIMARY KEY, member text, value bigint)');
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
    ADMIN_API_KEY: randomBytes(16).toString('hex'),
    REDIS_PREFIX: tag,
    LOG_LEVEL: 'warn',
  };
  const ctx = createContext(parseEnv(env));
  await putBoard(ctx, 'cost', { aggregation: 'sum', period: 'all' });
  const board = (await ctx.boards.get('cost'))!;
  let seq = 0;
  const batch = (size = 1000): RoutedEvent[] =>
    Array.from({ length: size }, (_, ord) => {
      seq += 1;
      const now = new Date();
      return {
        ord,
        key: `${tag}-${seq}`,
        boardId: 'cost',
        periodKey: 'all',
        startsAt: new Date('2000-01-01'),
        endsAt: null,
        memberId: `m${seq % 50_000}`,
        category: null,
        value: String(seq % 1000),
        occurredAt: now,
        receivedAt: now,
        source: null,
        payloadHash: 'h',
        metadata: null,
        payload: { board: 'cost', member: `m${seq % 50_000}`, value: seq % 1000 },
        preReason: null,
      };
    });
  const timings = new Map<number, { apply: number[]; insert: number[] }>();
  for (const size of sizes) {
    const apply: number[] = [];
    const insert: number[] = [];
    // As many events at every size, within bounds: small calls are many, and quick.
    const count = Math.min(2000, Math.max(batches, Math.round((batches * 1000) / size / 10)));
    for (let i = 0; i < count; i += 1) {
      const events = batch(size);
      let t = performance.now();
      const out = await applyBatch(ctx.db, events, [{ id: 'cost', revision: board.revision }], new Date());
      apply.push(performance.now() - t);
      if (out.stale) throw new Error('stale board');
      t = performance.now();
      await raw.query('INSERT INTO raw_events SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])', [
        events.map((e) => `${e.key}`),
        events.map((e) => e.memberId),
        events.map((e) => Number(e.value)),
      ]);
      insert.push(performance.now() - t);
    }
    timings.set(size, { apply: apply.sort((a, b) => a - b), insert: insert.sort((a, b) => a - b) });
  }
  // One more batch with auto_explain on one session: where the time goes inside the function.
  const explained = new pg.Client({ connectionString: dbUrl });
  await explained.connect();
  const plans: string[] = [];
  explained.on('notice', (n) => plans.push(n.message ?? ''));
  await explained.query("LOAD 'auto_explain'");
  await explained.query(
    "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET auto_explain.log_buffers = on; SET auto_explain.log_triggers = on; SET auto_explain.log_level = 'notice'",
  );
  const one = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: { connect: async () => Object.assign(explained, { release: () => undefined }), end: async () => undefined },
    }),
  });
  // APPLY_COST_EXPLAIN_SIZE=1: where a small call's fixed cost goes instead.
  await applyBatch(
    one,
    batch(Number(process.env.APPLY_COST_EXPLAIN_SIZE ?? 1000)),
    [{ id: 'cost', revision: board.revision }],
    new Date(),
  );
  await explained.end();
  const statements = plans
    .map((p) => ({
      ms: Number(/duration: ([\d.]+) ms/.exec(p)?.[1] ?? 0),
      text: (/Query Text: ([\s\S]*?)\n(?:\S|\s{2}\S)/.exec(p)?.[1] ?? p).replace(/\s+/g, ' ').slice(0, 110),
    }))
    .sort((a, b) => b.ms - a.ms);
  // Buffer accesses and trigger calls do not move with the load of a shared machine as times
  // do: they compare schemas (indexes, foreign keys) where medians drown in noise. The call's
  // own plan counts its nested statements' buffers.
  const call = plans.find((p) => /Query Text:\s*SELECT laurel_apply_batch/.test(p)) ?? '';
  const buffers = /Buffers: (.*)/.exec(call)?.[1] ?? 'none';
  const triggers = plans.flatMap((p) => p.match(/^\s*Trigger .*$/gm) ?? []).map((t) => t.trim());
  // APPLY_COST_PLANS=<file>: every plan of that batch, in full.
  if (process.env.APPLY_COST_PLANS) writeFileSync(process.env.APPLY_COST_PLANS, plans.join('\n\n'));
  const { rows } = await raw.query(
    'SELECT funcname, calls, round(total_time::numeric, 1) AS total_ms, round(self_time::numeric, 1) AS self_ms FROM pg_stat_user_functions ORDER BY self_time DESC',
  );
  const line = (name: string, size: number, xs: number[]) =>
    `${name}: median ${round(quantile(xs, 0.5), 2)} ms, p90 ${round(quantile(xs, 0.9), 2)} ms per call of ${size}, ${round((quantile(xs, 0.5) * 1000) / size, 1)} µs per event (${xs.length} calls)`;
  for (const [size, t] of timings) {
    process.stdout.write(
      `${line('laurel_apply_batch via applyBatch', size, t.apply)}\n${line('  raw INSERT of the same rows', size, t.insert)}\n`,
    );
  }
  process.stdout.write(
    `Postgres function times (pg_stat_user_functions):\n${rows.map((r) => `  ${r.funcname}: ${r.calls} calls, total ${r.total_ms} ms, self ${r.self_ms} ms`).join('\n')}\n`,
  );
  process.stdout.write(
    `Statements of one batch by duration (auto_explain, nested):\n${statements
      .slice(0, 12)
      .map((st) => `  ${st.ms.toFixed(1)} ms  ${st.text}`)
      .join('\n')}\n`,
  );
  process.stdout.write(
    `Buffers of that batch (the call, nested statements included): ${buffers}\nTriggers of that batch: ${triggers.length === 0 ? 'none' : `\n${triggers.map((t) => `  ${t}`).join('\n')}`}\n`,
  );
  await raw.end();
  await ctx.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS "laurel_${tag}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}
