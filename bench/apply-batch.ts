/**
 * Times laurel_apply_batch, the ingest hot path, on two databases in alternation (the
 * machine is noisy, so A and B take turns batch by batch): 1000 fresh events per batch,
 * spread over 20,000 members of one `sum` board, stamped in the current month.
 *
 *   tsx bench/apply-batch.ts <database url A> <database url B> [batches per database]
 *
 * Both databases must be migrated; the script adds a board `bench-apply` to each.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createPostgres } from '../src/storage/postgres/database.js';
import { applyBatch, type RoutedEvent } from '../src/storage/postgres/events-repository.js';

const [urlA, urlB, batchesArg] = process.argv.slice(2);
if (!urlA || !urlB) {
  process.stderr.write('usage: tsx bench/apply-batch.ts <database url A> <database url B> [batches]\n');
  process.exit(1);
}
const BATCHES = Number.parseInt(batchesArg ?? '30', 10);
const BATCH = 1000;
const BOARD = 'bench-apply';
const run = randomBytes(4).toString('hex');

const now = new Date();
const startsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
const endsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
const periodKey = `${startsAt.getUTCFullYear()}-${String(startsAt.getUTCMonth() + 1).padStart(2, '0')}`;

async function prepare(url: string) {
  const { db } = createPostgres(url, { max: 1, applicationName: 'laurel-bench-apply' });
  await sql`
    INSERT INTO boards (id, display_name, aggregation, sort_order, tie_break, period_kind, timezone, decimals, grace_seconds, awards)
    VALUES (${BOARD}, 'bench', 'sum', 'desc', 'first', 'month', 'UTC', 0, 300, '[]'::jsonb)
    ON CONFLICT DO NOTHING`.execute(db);
  const { rows } = await sql<{ revision: number }>`SELECT revision FROM boards WHERE id = ${BOARD}`.execute(db);
  return { db, revision: rows[0]!.revision };
}

function batch(label: string, n: number): RoutedEvent[] {
  const span = now.getTime() - startsAt.getTime();
  return Array.from({ length: BATCH }, (_, i) => {
    const occurredAt = new Date(startsAt.getTime() + Math.floor(Math.random() * span));
    return {
      ord: i,
      key: `${run}-${label}-${n}-${i}`,
      boardId: BOARD,
      periodKey,
      startsAt,
      endsAt,
      memberId: `m${Math.floor(Math.random() * 20_000)}`,
      category: null,
      value: String(1 + Math.floor(Math.random() * 1000)),
      occurredAt,
      receivedAt: now,
      source: 'bench',
      payloadHash: randomBytes(16).toString('hex'),
      metadata: null,
      payload: {},
      preReason: null,
    };
  });
}

const sides = [
  { label: 'A', ...(await prepare(urlA)), times: [] as number[] },
  { label: 'B', ...(await prepare(urlB)), times: [] as number[] },
];
for (let n = 0; n < BATCHES; n += 1) {
  // Alternate which side goes first, so neither always follows the other.
  for (const side of n % 2 === 0 ? sides : [...sides].reverse()) {
    const events = batch(side.label, n);
    const started = process.hrtime.bigint();
    const result = await applyBatch(side.db, events, [{ id: BOARD, revision: side.revision }], new Date());
    side.times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (result.stale) throw new Error('board revision went stale');
  }
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
for (const side of sides) {
  // The first batches warm caches and plans; they are left out.
  const t = side.times.slice(3);
  process.stdout.write(
    `${side.label}: ${t.length} batches of ${BATCH}, median ${pct(t, 50).toFixed(1)} ms, p90 ${pct(t, 90).toFixed(1)} ms, mean ${(t.reduce((a, b) => a + b, 0) / t.length).toFixed(1)} ms\n`,
  );
  await side.db.destroy();
}
