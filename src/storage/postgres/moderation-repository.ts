import { sql } from 'kysely';
import { Conflict } from '../../domain/errors.js';
import type { Db } from './database.js';
import type { AggregateState } from './events-repository.js';
import { asDomainError, hasPgCode, PG_ERROR } from './pg-errors.js';
import { hashedKey } from './functions/key-hash.js';

export interface MemberRow {
  id: string;
  displayName: string | null;
  region: string | null;
  excludedAt: Date | null;
}

/**
 * Creates the member if needed and locks it: batches for this member wait until commit. A
 * wait Postgres gives up (timeout, deadlock, cancel) is Contention: the caller's whole
 * transaction is undone, and the request may be sent again.
 */
export async function lockMember(db: Db, memberId: string, create: boolean): Promise<MemberRow | undefined> {
  try {
    if (create)
      await db
        .insertInto('members')
        .values({ id: memberId })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    const row = await db.selectFrom('members').selectAll().where('id', '=', memberId).forUpdate().executeTakeFirst();
    return row && { id: row.id, displayName: row.display_name, region: row.region, excludedAt: row.excluded_at };
  } catch (err) {
    throw asDomainError(err);
  }
}

export async function findMember(db: Db, memberId: string): Promise<MemberRow | undefined> {
  const row = await db.selectFrom('members').selectAll().where('id', '=', memberId).executeTakeFirst();
  return row && { id: row.id, displayName: row.display_name, region: row.region, excludedAt: row.excluded_at };
}

/** One member's profile as a batch sets it: a field left undefined keeps its stored value. */
export interface ProfileWrite {
  id: string;
  displayName?: string | null | undefined;
  region?: string | null | undefined;
}

/**
 * Creates the members that do not exist yet, locks them all in id order (two batches never
 * wait on each other in a cycle) and sets the fields each write names: three statements
 * whatever the batch's size. Returns each member's row as it stood before, so the caller
 * sees whose region changed. `writes` holds each member once.
 */
export async function lockAndUpdateMembers(db: Db, writes: readonly ProfileWrite[]): Promise<Map<string, MemberRow>> {
  if (writes.length === 0) return new Map();
  const ids = writes.map((w) => w.id).sort();
  const input = JSON.stringify(
    writes.map((w) => ({
      id: w.id,
      set_name: w.displayName !== undefined,
      display_name: w.displayName ?? null,
      set_region: w.region !== undefined,
      region: w.region ?? null,
    })),
  );
  try {
    await sql`
      INSERT INTO members (id) SELECT id FROM unnest(${ids}::text[]) AS u(id) ORDER BY id
          ON CONFLICT (id) DO NOTHING`.execute(db);
    const { rows } = await sql<{
      id: string;
      display_name: string | null;
      region: string | null;
      excluded_at: Date | null;
    }>`
      SELECT id, display_name, region, excluded_at FROM members
       WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`.execute(db);
    await sql`
      UPDATE members m
         SET display_name = CASE WHEN x.set_name THEN x.display_name ELSE m.display_name END,
             region = CASE WHEN x.set_region THEN x.region ELSE m.region END,
             updated_at = now()
        FROM jsonb_to_recordset(${input}::jsonb)
             AS x(id text, set_name boolean, display_name text, set_region boolean, region text)
       WHERE m.id = x.id`.execute(db);
    return new Map(
      rows.map((r) => [r.id, { id: r.id, displayName: r.display_name, region: r.region, excludedAt: r.excluded_at }]),
    );
  } catch (err) {
    throw asDomainError(err);
  }
}

/** Moves the members' aggregates of open periods on region boards to each one's new region. */
export async function moveOpenAggregates(
  db: Db,
  moves: ReadonlyArray<{ id: string; region: string | null }>,
): Promise<void> {
  if (moves.length === 0) return;
  const ids = moves.map((m) => m.id);
  // Hold the members' open periods FOR SHARE, so a close in progress cannot read half a move.
  await sql`
    SELECT 1 FROM periods p
     WHERE p.state = 'open'
       AND (p.board_id, p.key) IN (SELECT board_id, period_key FROM member_aggregates WHERE member_id = ANY(${ids}::text[]))
     ORDER BY p.board_id, p.key
       FOR SHARE`.execute(db);
  await sql`
    UPDATE member_aggregates a
       SET region = x.region, version = a.version + 1, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(moves)}::jsonb) AS x(id text, region text), periods p, boards b
     WHERE a.member_id = x.id
       AND p.board_id = a.board_id AND p.key = a.period_key AND p.state = 'open'
       AND b.id = a.board_id AND b.regions`.execute(db);
}

/** Bumps every aggregate of the member, so that the projection of its new state wins. */
export async function bumpAllAggregates(db: Db, memberId: string): Promise<void> {
  await sql`UPDATE member_aggregates SET version = version + 1, updated_at = now() WHERE member_id = ${memberId}`.execute(
    db,
  );
}

/**
 * The member's aggregates as the projection needs them (optionally open periods only).
 * With `retiredBefore`, periods closed at or before it are left out: their Redis keys are
 * gone for good (closed-period retention) and a projection must not bring part of them back.
 */
export async function memberProjection(
  db: Db,
  memberId: string,
  options: { openOnly: boolean; retiredBefore?: Date },
): Promise<AggregateState[]> {
  return membersProjection(db, [memberId], options);
}

/** `memberProjection` of several members in one query. */
export async function membersProjection(
  db: Db,
  memberIds: readonly string[],
  options: { openOnly: boolean; retiredBefore?: Date },
): Promise<AggregateState[]> {
  if (memberIds.length === 0) return [];
  const retired = options.retiredBefore
    ? sql`AND NOT (p.state = 'closed' AND p.closed_at <= ${options.retiredBefore})`
    : sql``;
  const { rows } = await sql<{ state: AggregateState }>`
    SELECT laurel_aggregate_json(a, b.regions, m.excluded_at IS NOT NULL) AS state
      FROM member_aggregates a
      JOIN boards b ON b.id = a.board_id
      JOIN members m ON m.id = a.member_id
      JOIN periods p ON p.board_id = a.board_id AND p.key = a.period_key
     WHERE a.member_id = ANY(${[...memberIds]}::text[]) ${options.openOnly ? sql`AND p.state = 'open'` : sql``} ${retired}`.execute(
    db,
  );
  return rows.map((r) => r.state);
}

export async function recordExclusion(db: Db, memberId: string, reason: string, by: string, at: Date): Promise<void> {
  await db.updateTable('members').set({ excluded_at: at, updated_at: at }).where('id', '=', memberId).execute();
  await db
    .insertInto('member_exclusions')
    .values({ member_id: memberId, reason, excluded_by: by, excluded_at: at })
    .execute();
  await logModeration(db, memberId, 'exclusion', at);
}

/** One moderation_log row per open period the member has an aggregate in (rollups count them). */
async function logModeration(db: Db, memberId: string, kind: 'exclusion' | 'restore', at: Date): Promise<void> {
  await sql`
    INSERT INTO moderation_log (board_id, period_key, at, kind)
    SELECT DISTINCT a.board_id, a.period_key, ${at}::timestamptz, ${kind}
      FROM member_aggregates a JOIN periods p ON p.board_id = a.board_id AND p.key = a.period_key
     WHERE a.member_id = ${memberId} AND p.state = 'open'`.execute(db);
}

export async function recordRestore(
  db: Db,
  memberId: string,
  reason: string | null,
  by: string,
  at: Date,
): Promise<void> {
  await db.updateTable('members').set({ excluded_at: null, updated_at: at }).where('id', '=', memberId).execute();
  await db
    .updateTable('member_exclusions')
    .set({ restored_by: by, restored_at: at, restore_reason: reason })
    .where('member_id', '=', memberId)
    .where('restored_at', 'is', null)
    .execute();
  await logModeration(db, memberId, 'restore', at);
}

export async function exclusionHistory(db: Db, memberId: string) {
  return db.selectFrom('member_exclusions').selectAll().where('member_id', '=', memberId).orderBy('id').execute();
}

/**
 * Voids a member's events of one board period that are not voided yet, one event (`key`) or
 * all of them, and recomputes the member's aggregates of that period from the ledger once.
 * Each voided event is counted in the moderation log. Returns how many were voided. Conflict when the
 * recomputed aggregate would leave ±2^40 (a sum without a negative event).
 */
export async function voidEventsAndRecompute(
  db: Db,
  target: { board: string; period: string; member: string; key?: string },
  reason: string,
  at: Date,
): Promise<number> {
  let voiding = db
    .updateTable('score_events')
    .set({ status: 'voided', void_reason: reason, voided_at: at })
    .where('board_id', '=', target.board)
    .where('period_key', '=', target.period)
    .where('member_id', '=', target.member)
    // Exhausted events too (stored beyond maxAttempts): voided, none of them can come to count.
    .where('status', '<>', 'voided');
  if (target.key !== undefined) {
    const key = target.key;
    // The key table knows the event's occurred_at: the update prunes to its one partition.
    voiding = voiding
      .where('idempotency_key', '=', key)
      .where('occurred_at', '=', (eb) =>
        eb
          .selectFrom('score_event_keys')
          .select('occurred_at')
          .where('idempotency_key', '=', hashedKey(key))
          .where('board_id', '=', target.board),
      );
  }
  const voided = (await voiding.returning('id').execute()).length;
  if (voided === 0) return 0;
  await db
    .insertInto('moderation_log')
    .values(
      Array.from({ length: voided }, () => ({
        board_id: target.board,
        period_key: target.period,
        at,
        kind: 'void' as const,
      })),
    )
    .execute();
  try {
    await recomputeAggregates(
      db,
      { board: target.board, period: target.period, member: target.member, category: null },
      at,
    );
  } catch (err) {
    if (hasPgCode(err, PG_ERROR.checkViolation)) {
      throw new Conflict(`voiding would take the member aggregate beyond ±2^40`, undefined, { cause: err });
    }
    throw err;
  }
  return voided;
}

/** Recomputes aggregates from the ledger (see laurel_recompute_aggregates); returns rows written. */
export async function recomputeAggregates(
  db: Db,
  target: { board: string; period: string; member: string | null; category: string | null },
  at: Date,
): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT laurel_recompute_aggregates(${target.board}, ${target.period}, ${target.member}, ${target.category}, ${at.toISOString()}::timestamptz) AS n`.execute(
    db,
  );
  return rows[0]!.n;
}

/** Locks one ledger event, a board's key, for a state change. */
export async function lockEvent(db: Db, board: string, key: string) {
  // The key table knows the event's occurred_at: the lookup prunes to its one partition.
  return db
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
    .forUpdate()
    .executeTakeFirst();
}
