import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrateBefore, migrationsFrom, scratchDatabase } from '../support/migration-database.js';
import { migrateToLatest } from '../../src/storage/postgres/migrator.js';

const HASHING = '2026-12-03-0013-hashed-event-keys';
const sha = (key: string) => `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;

describe('migration 0013: the key table holds every key hashed', () => {
  const database = scratchDatabase('keys');

  it('hashes plain keys once, leaves keys an erasure hashed as they are, and keeps them unique', async () => {
    const db = database();
    await migrateBefore(db, HASHING);

    const row = (key: string, member: string) => sql`
      INSERT INTO score_event_keys (idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at)
      VALUES (${key}, 'h', 'b', 'all', ${member}, NULL, now())`;
    await row('plain-1', 'm1').execute(db);
    // A posted key that reads like another's hash: rewritten row by row, the two would collide.
    await row(sha('plain-1'), 'm2').execute(db);
    // An erased member's key, hashed and renamed by the erasure's Postgres step.
    await row(sha('erased-1'), 'erased:0123456789ab').execute(db);
    await sql`
      INSERT INTO erasures (id, member_hash, pseudonym, state, requested_at, redis_periods)
      VALUES (gen_random_uuid(), 'x', 'erased:0123456789ab', 'done', now(), '[]')`.execute(db);

    expect((await migrateToLatest(db)).migrations).toEqual(migrationsFrom(HASHING));
    const { rows } = await sql<{ key: string; member: string }>`
      SELECT idempotency_key AS key, member_id AS member FROM score_event_keys ORDER BY member_id`.execute(db);
    expect(rows).toEqual([
      // Later taken from the pseudonym by migration 0021.
      { key: sha('erased-1'), member: '(erased)' },
      { key: sha('plain-1'), member: 'm1' },
      { key: sha(sha('plain-1')), member: 'm2' },
    ]);
    const pk = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'score_event_keys'::regclass AND contype = 'p'`.execute(
      db,
    );
    expect(pk.rows[0]!.n).toBe(1);
  });
});
