import { sql } from 'kysely';
import type { Db } from './database.js';
import { hashedKey } from './functions/key-hash.js';
import { asDomainError } from './pg-errors.js';

export type RejectionReason =
  'period_closed' | 'conflict' | 'out_of_range' | 'outside_window' | 'attempts_exhausted' | 'board_full';
export type ApplyOutcome = 'applied' | 'duplicate' | RejectionReason;

/** One event, routed to its period and scaled, ready for laurel_apply_batch. */
export interface RoutedEvent {
  ord: number;
  key: string;
  boardId: string;
  periodKey: string;
  startsAt: Date;
  endsAt: Date | null;
  memberId: string;
  category: string | null;
  /** Scaled integer as a decimal string; null when preReason says why it cannot count. */
  value: string | null;
  /** Scaled like value; null when the event carries none (it then counts as 0). */
  subscore?: string | null;
  occurredAt: Date;
  receivedAt: Date;
  source: string | null;
  payloadHash: string;
  metadata: unknown;
  /** The event as posted, kept with a rejection for audit. */
  payload: unknown;
  preReason: RejectionReason | null;
}

export interface EventOutcome {
  ord: number;
  key: string;
  outcome: ApplyOutcome;
  board: string;
  period: string;
  member: string;
}

/** A member aggregate as it stands after the batch, for the Redis projection. */
export interface AggregateState {
  board: string;
  period: string;
  category: string;
  member: string;
  /** Scaled value. */
  value: string;
  /** Scaled subscore ('0', or absent, without one). */
  subscore?: string;
  reachedSec: number;
  version: number;
  /** Region scope the member counts in, null on boards without regions. */
  region: string | null;
  /** Not ranked anywhere: the member is excluded, or every event of the aggregate was voided. */
  hidden: boolean;
}

export type ApplyBatchResult =
  | { stale: string[] }
  | {
      stale?: undefined;
      results: EventOutcome[];
      aggregates: AggregateState[];
      /** Periods this batch created. */
      createdPeriods: Array<{ board: string; period: string }>;
    };

/** Applies a batch in one round trip (laurel_apply_batch: storage/postgres/functions/apply-batch.ts). */
export async function applyBatch(
  db: Db,
  events: readonly RoutedEvent[],
  boardRevisions: ReadonlyArray<{ id: string; revision: number }>,
  now: Date,
): Promise<ApplyBatchResult> {
  const rows = events.map((e) => ({
    ord: e.ord,
    key: e.key,
    board_id: e.boardId,
    period_key: e.periodKey,
    starts_at: e.startsAt.toISOString(),
    ends_at: e.endsAt?.toISOString() ?? null,
    member_id: e.memberId,
    category: e.category,
    value: e.value,
    occurred_at: e.occurredAt.toISOString(),
    received_at: e.receivedAt.toISOString(),
    source: e.source,
    payload_hash: e.payloadHash,
    metadata: e.metadata ?? null,
    payload: e.payload,
    pre_reason: e.preReason,
    subscore: e.subscore ?? null,
  }));
  // Text Postgres cannot store throws InvalidInput, a lost race for time or locks Contention.
  const { rows: out } = await sql<{ result: ApplyBatchResult }>`
    SELECT laurel_apply_batch(${JSON.stringify(rows)}::jsonb, ${JSON.stringify(boardRevisions)}::jsonb, ${now.toISOString()}::timestamptz) AS result
  `
    .execute(db)
    .catch((err: unknown) => {
      throw asDomainError(err);
    });
  return out[0]!.result;
}

export interface StoredEvent {
  key: string;
  status: 'applied' | 'voided' | 'exhausted';
  board: string;
  period: string;
  member: string;
  category: string | null;
  value: number;
  occurredAt: Date;
  receivedAt: Date;
  appliedAt: Date;
  source: string | null;
  voidReason: string | null;
  voidedAt: Date | null;
}

/** A board's event (an event is (board, key)); the key table gives its partition. */
export async function findEvent(db: Db, board: string, key: string): Promise<StoredEvent | undefined> {
  const row = await db
    .selectFrom('score_events')
    .selectAll()
    .where('idempotency_key', '=', key)
    .where('board_id', '=', board)
    .where('occurred_at', '=', (eb) =>
      eb
        .selectFrom('score_event_keys')
        .select('occurred_at')
        .where('idempotency_key', '=', hashedKey(key))
        .where('board_id', '=', board),
    )
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    key: row.idempotency_key,
    status: row.status,
    board: row.board_id,
    period: row.period_key,
    member: row.member_id,
    category: row.category,
    value: row.value,
    occurredAt: row.occurred_at,
    receivedAt: row.received_at,
    appliedAt: row.applied_at,
    source: row.source,
    voidReason: row.void_reason,
    voidedAt: row.voided_at,
  };
}

/**
 * The boards that hold an event or a rejection under the key, in id order: the key table
 * (archived months included) and the rejections, both by the key's index prefix.
 */
export async function boardsHoldingKey(db: Db, key: string): Promise<string[]> {
  const { rows } = await sql<{ board_id: string }>`
    SELECT k.board_id FROM score_event_keys k WHERE k.idempotency_key = ${hashedKey(key)}
    UNION
    SELECT r.board_id FROM rejections r WHERE r.idempotency_key = ${key}
    ORDER BY 1`.execute(db);
  return rows.map((r) => r.board_id);
}

/** The UTC month whose archived ledger holds the board's event, if it was archived. */
export async function archivedMonthOf(db: Db, board: string, key: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('score_event_keys as k')
    .innerJoin('ledger_archives as a', (j) =>
      j.on(sql<boolean>`a.month = date_trunc('month', k.occurred_at AT TIME ZONE 'UTC')`),
    )
    .select(sql<string>`to_char(a.month, 'YYYY-MM')`.as('month'))
    .where('k.idempotency_key', '=', hashedKey(key))
    .where('k.board_id', '=', board)
    .executeTakeFirst();
  return row?.month;
}

export interface StoredRejection {
  key: string;
  reason: RejectionReason;
  board: string;
  period: string | null;
  member: string;
  payload: unknown;
  source: string | null;
  receivedAt: Date;
  rejectedAt: Date;
}

/** The latest rejection recorded under a board's key. */
export async function findLatestRejection(db: Db, board: string, key: string): Promise<StoredRejection | undefined> {
  const row = await db
    .selectFrom('rejections')
    .selectAll()
    .where('idempotency_key', '=', key)
    .where('board_id', '=', board)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    key: row.idempotency_key,
    reason: row.reason,
    board: row.board_id,
    period: row.period_key,
    member: row.member_id,
    payload: row.payload,
    source: row.source,
    receivedAt: row.received_at,
    rejectedAt: row.rejected_at,
  };
}

/** The member's (all) aggregate in a period as it stands, null when nothing counts. */
export async function currentAggregate(
  db: Db,
  ref: { board: string; period: string; member: string },
): Promise<number | null> {
  const row = await db
    .selectFrom('member_aggregates')
    .select(['value', 'event_count'])
    .where('board_id', '=', ref.board)
    .where('period_key', '=', ref.period)
    .where('category', '=', 'all')
    .where('member_id', '=', ref.member)
    .executeTakeFirst();
  return row && row.event_count > 0 ? row.value : null;
}
