import { sql } from 'kysely';
import type { Db } from './database.js';
import { hashedKeySql } from './functions/key-hash.js';

/**
 * The metadata of the event that produced each member's current value in a category
 * (`?metadata=true`, docs/api.md): the aggregate's `last_key` names that event for every aggregation
 * (best: the best pair reached first; last: the latest; sum: the latest counted). One
 * statement for a whole answer: the aggregates by primary key, the key table for the event's
 * partition, the ledger by (key, occurred_at). Members without an aggregate are left out.
 */
export async function producingMetadata(
  db: Db,
  scope: { board: string; period: string; category: string },
  members: readonly string[],
): Promise<Map<string, unknown>> {
  if (members.length === 0) return new Map();
  const { rows } = await sql<{ member_id: string; metadata: unknown }>`
    SELECT a.member_id, e.metadata
      FROM member_aggregates a
      JOIN score_event_keys k ON k.idempotency_key = ${sql.raw(hashedKeySql('a.last_key'))} AND k.board_id = a.board_id
      JOIN score_events e ON e.idempotency_key = a.last_key AND e.board_id = a.board_id AND e.occurred_at = k.occurred_at
     WHERE a.board_id = ${scope.board} AND a.period_key = ${scope.period} AND a.category = ${scope.category}
       AND a.member_id = ANY(${[...new Set(members)]}::text[])`.execute(db);
  return new Map(rows.map((r) => [r.member_id, r.metadata]));
}
