import { sql } from 'kysely';
import type { Db } from './database.js';
import type { Board } from '../../domain/board.js';
import type { Scope } from '../../domain/scope.js';
import { scopeOrder } from './standings-repository.js';
import { hasPgCode, PG_ERROR } from './pg-errors.js';

export interface DuePeriod {
  boardId: string;
  key: string;
  startsAt: Date;
  state: 'open' | 'closing';
}

/**
 * When an open period `p` of board `b` is due to close: past endsAt + graceSeconds, or closed
 * now by an operator (its end moved to that moment, without grace). The one rule for the tick,
 * the bulk close of empty periods and the guarded transition of one.
 */
function isDue(now: Date) {
  return sql<boolean>`(p.close_requested_at IS NOT NULL
          OR (p.ends_at IS NOT NULL AND p.ends_at + make_interval(secs => b.grace_seconds) <= ${now}))`;
}

/** Periods to close: open ones that are due, and any left in `closing` by a crash. */
export async function duePeriods(db: Db, now: Date): Promise<DuePeriod[]> {
  const { rows } = await sql<{ board_id: string; key: string; starts_at: Date; state: 'open' | 'closing' }>`
    SELECT p.board_id, p.key, p.starts_at, p.state
      FROM periods p JOIN boards b ON b.id = p.board_id
     WHERE (p.state = 'open' AND ${isDue(now)})
        OR p.state = 'closing'
     ORDER BY p.ends_at, p.board_id`.execute(db);
  return rows.map((r) => ({ boardId: r.board_id, key: r.key, startsAt: r.starts_at, state: r.state }));
}

/**
 * The guarded transition open -> closing. It takes the period row FOR UPDATE, so it waits
 * for batches in flight (they hold it FOR SHARE) and later batches see `closing` and are
 * rejected. True only for the caller that made the transition.
 */
export async function beginClosing(db: Db, boardId: string, key: string, now: Date): Promise<boolean> {
  const { rows } = await sql`
    UPDATE periods p SET state = 'closing', closing_started_at = ${now}
      FROM boards b
     WHERE b.id = p.board_id AND p.board_id = ${boardId} AND p.key = ${key} AND p.state = 'open' AND ${isDue(now)}
    RETURNING 1`.execute(db);
  return rows.length > 0;
}

/**
 * Every due open period -> closing in one statement (the same guard as beginClosing, for
 * all of them): many boards with short periods cost one statement per tick, not one per period.
 */
export async function beginClosingDue(db: Db, now: Date): Promise<number> {
  const { numAffectedRows } = await sql`
    UPDATE periods p SET state = 'closing', closing_started_at = ${now}
      FROM boards b
     WHERE b.id = p.board_id AND p.state = 'open' AND ${isDue(now)}`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/**
 * Finishes, in one statement, every closing period that no event reached: no aggregate rows
 * means no standings, awards or reports to write. Safe only after the open -> closing
 * transition (batches no longer count in the period, so none can appear meanwhile).
 * `webhooksDone`: nothing will be delivered (no receiver), so they are marked enqueued too.
 */
export async function finishEmptyClosings(
  db: Db,
  now: Date,
  webhooksDone: boolean,
): Promise<Array<{ boardId: string; key: string; startsAt: Date; endsAt: Date | null }>> {
  const { rows } = await sql<{ board_id: string; key: string; starts_at: Date; ends_at: Date | null }>`
    UPDATE periods p SET state = 'closed', closed_at = ${now}, webhooks_enqueued_at = ${webhooksDone ? now : null}
     WHERE p.state = 'closing'
       AND NOT EXISTS (SELECT 1 FROM member_aggregates a WHERE a.board_id = p.board_id AND a.period_key = p.key)
    RETURNING p.board_id, p.key, p.starts_at, p.ends_at`.execute(db);
  return rows.map((r) => ({ boardId: r.board_id, key: r.key, startsAt: r.starts_at, endsAt: r.ends_at }));
}

/** Marks many periods' webhooks enqueued in one statement. */
export async function markWebhooksEnqueuedMany(
  db: Db,
  refs: ReadonlyArray<{ boardId: string; key: string }>,
  now: Date,
): Promise<void> {
  if (refs.length === 0) return;
  await sql`
    UPDATE periods p SET webhooks_enqueued_at = ${now}
      FROM jsonb_to_recordset(${JSON.stringify(refs)}::jsonb) AS r("boardId" text, key text)
     WHERE p.board_id = r."boardId" AND p.key = r.key`.execute(db);
}

/** Locks a closing period; false if it is not (or no longer) closing. */
export async function lockClosing(db: Db, boardId: string, key: string): Promise<boolean> {
  // Another closer (a tick on another worker, say) may close it after this transaction's
  // snapshot: the lock then fails the statement, and the savepoint keeps the transaction
  // usable, so the caller finds nothing to do and commits nothing.
  await sql`SAVEPOINT lock_closing`.execute(db);
  try {
    const { rows } =
      await sql`SELECT 1 FROM periods WHERE board_id = ${boardId} AND key = ${key} AND state = 'closing' FOR UPDATE`.execute(
        db,
      );
    await sql`RELEASE SAVEPOINT lock_closing`.execute(db);
    return rows.length > 0;
  } catch (err) {
    if (!hasPgCode(err, PG_ERROR.serializationFailure)) throw err;
    await sql`ROLLBACK TO SAVEPOINT lock_closing`.execute(db);
    return false;
  }
}

/**
 * Final standings of every scope of the period, from member_aggregates, in set-based
 * statements (memory stays flat whatever the period size). Unique keys make a repeat a no-op.
 */
export async function writeFinalStandings(db: Db, board: Board, key: string): Promise<void> {
  const order = scopeOrder(board);
  const rank =
    board.tieBreak === 'shared'
      ? sql`rank() OVER (PARTITION BY a.category ORDER BY ${order.value})`
      : sql`row_number() OVER (PARTITION BY a.category ORDER BY ${order.full})`;
  const regionRank =
    board.tieBreak === 'shared'
      ? sql`rank() OVER (PARTITION BY a.category, a.region ORDER BY ${order.value})`
      : sql`row_number() OVER (PARTITION BY a.category, a.region ORDER BY ${order.full})`;
  const subscore = board.subscore ? sql`a.subscore` : sql`NULL::bigint`;
  await sql`
    INSERT INTO period_results (board_id, period_key, category, region, position, rank, member_id, value, subscore)
    SELECT a.board_id, a.period_key, a.category, 'world',
           row_number() OVER (PARTITION BY a.category ORDER BY ${order.full}), ${rank}, a.member_id, a.value, ${subscore}
      FROM member_aggregates a JOIN members m ON m.id = a.member_id
     WHERE a.board_id = ${board.id} AND a.period_key = ${key} AND a.event_count > 0 AND m.excluded_at IS NULL
    ON CONFLICT DO NOTHING`.execute(db);
  if (board.regions) {
    await sql`
      INSERT INTO period_results (board_id, period_key, category, region, position, rank, member_id, value, subscore)
      SELECT a.board_id, a.period_key, a.category, a.region,
             row_number() OVER (PARTITION BY a.category, a.region ORDER BY ${order.full}), ${regionRank}, a.member_id, a.value, ${subscore}
        FROM member_aggregates a JOIN members m ON m.id = a.member_id
       WHERE a.board_id = ${board.id} AND a.period_key = ${key} AND a.event_count > 0 AND m.excluded_at IS NULL
         AND a.region IS NOT NULL
      ON CONFLICT DO NOTHING`.execute(db);
  }
  // The rows just written change the table a lot: fresh statistics keep the award and
  // report statements on hash joins instead of nested loops over a "tiny" table.
  await sql`ANALYZE period_results`.execute(db);
}

/**
 * Awards (docs/design/periods.md): top{N} per (category, world) scope, the best tier reached; region_top{N}
 * per region of the (all) category; following_top1 to whoever ranks first among themselves
 * and those they follow (ties share first place, so equals are never picked arbitrarily).
 */
export async function grantAwards(db: Db, board: Board, key: string, now: Date): Promise<void> {
  const tiers = board.awards.tiers;
  const regionTiers = board.awards.regionTiers;
  await sql`
    INSERT INTO awards (board_id, period_key, category, region, member_id, award, rank, granted_at)
    SELECT r.board_id, r.period_key, r.category, r.region, r.member_id, 'top' || t.tier, r.rank, ${now}
      FROM period_results r
      CROSS JOIN LATERAL (SELECT min(x) AS tier FROM unnest(${tiers}::int[]) x WHERE r.rank <= x) t
     WHERE r.board_id = ${board.id} AND r.period_key = ${key} AND r.region = 'world' AND t.tier IS NOT NULL
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    INSERT INTO awards (board_id, period_key, category, region, member_id, award, rank, granted_at)
    SELECT r.board_id, r.period_key, r.category, r.region, r.member_id, 'region_top' || t.tier, r.rank, ${now}
      FROM period_results r
      CROSS JOIN LATERAL (SELECT min(x) AS tier FROM unnest(${regionTiers}::int[]) x WHERE r.rank <= x) t
     WHERE r.board_id = ${board.id} AND r.period_key = ${key} AND r.region <> 'world' AND r.category = 'all'
       AND t.tier IS NOT NULL
    ON CONFLICT DO NOTHING`.execute(db);
  if (!board.awards.followingTop1) return;
  await sql`
    WITH ranked AS (
      SELECT member_id, rank FROM period_results
       WHERE board_id = ${board.id} AND period_key = ${key} AND category = 'all' AND region = 'world'
    ),
    best_followed AS (
      SELECT f.member_id, min(o.rank) AS rank
        FROM member_follows f JOIN ranked o ON o.member_id = f.followed_id
       GROUP BY f.member_id
    )
    INSERT INTO awards (board_id, period_key, category, region, member_id, award, rank, granted_at)
    SELECT ${board.id}, ${key}, 'all', 'world', m.member_id, 'following_top1', m.rank, ${now}
      FROM ranked m JOIN best_followed b ON b.member_id = m.member_id
     WHERE m.rank <= b.rank
    ON CONFLICT DO NOTHING`.execute(db);
}

/**
 * One period_report per ranked member of (all, world), inserted in rank order, with the
 * member's most notable award: the (all, world) tier, else a region tier, else following_top1.
 */
export async function writeReports(db: Db, board: Board, key: string, label: string, now: Date): Promise<void> {
  await sql`
    INSERT INTO notifications (member_id, kind, board_id, period_key, rank, title, body, award, created_at)
    SELECT r.member_id, 'period_report', r.board_id, r.period_key, r.rank,
           ${label} || ' finished',
           -- On a league board a member plays in a bucket: the report names the place there,
           -- as its awards do (league_top1 is rank 1 of the bucket), and the tier they play
           -- in next (docs/design/leagues.md).
           'You finished ' || o.place ||
             CASE WHEN o.place % 100 BETWEEN 11 AND 13 THEN 'th'
                  WHEN o.place % 10 = 1 THEN 'st' WHEN o.place % 10 = 2 THEN 'nd' WHEN o.place % 10 = 3 THEN 'rd'
                  ELSE 'th' END
             || coalesce(' in ' || lp.bucket, '')
             || coalesce('; next tier: ' || lp.next_tier, ''),
           (SELECT w.award FROM awards w
             WHERE w.board_id = r.board_id AND w.period_key = r.period_key AND w.member_id = r.member_id
               AND (w.category = 'all' OR w.award = 'following_top1')
             ORDER BY CASE WHEN w.award LIKE 'top%' THEN 0 WHEN w.award LIKE 'region_top%' THEN 1 ELSE 2 END,
                      substring(w.award FROM '[0-9]+$')::int NULLS LAST
             LIMIT 1),
           ${now}
      FROM period_results r
      LEFT JOIN league_placements lp ON lp.board_id = r.board_id AND lp.period_key = r.period_key AND lp.member_id = r.member_id
      CROSS JOIN LATERAL (SELECT coalesce(lp.bucket_rank, r.rank) AS place) o
     WHERE r.board_id = ${board.id} AND r.period_key = ${key} AND r.category = 'all' AND r.region = 'world'
     ORDER BY r.position
    ON CONFLICT DO NOTHING`.execute(db);
}

export async function markClosed(db: Db, boardId: string, key: string, now: Date): Promise<void> {
  await db
    .updateTable('periods')
    .set({ state: 'closed', closed_at: now })
    .where('board_id', '=', boardId)
    .where('key', '=', key)
    .execute();
}

/** Closed periods whose webhooks were not enqueued yet (a crash right after the close commit). */
export async function periodsAwaitingWebhooks(db: Db): Promise<Array<{ boardId: string; key: string }>> {
  const rows = await db
    .selectFrom('periods')
    .select(['board_id', 'key'])
    .where('state', '=', 'closed')
    .where('webhooks_enqueued_at', 'is', null)
    .orderBy('closed_at')
    .execute();
  return rows.map((r) => ({ boardId: r.board_id, key: r.key }));
}

export async function markWebhooksEnqueued(db: Db, boardId: string, key: string, now: Date): Promise<void> {
  await db
    .updateTable('periods')
    .set({ webhooks_enqueued_at: now })
    .where('board_id', '=', boardId)
    .where('key', '=', key)
    .execute();
}

export interface ReportRow {
  id: number;
  member: string;
  rank: number;
  title: string;
  body: string;
  award: string | null;
}

/** A period's reports in rank order, a page at a time. */
/** Whether the member's report of a closed period is still held (an erasure removes it). */
export async function reportHeld(db: Db, boardId: string, key: string, member: string): Promise<boolean> {
  const { rows } = await sql`
    SELECT 1 FROM notifications
     WHERE board_id = ${boardId} AND period_key = ${key} AND kind = 'period_report' AND member_id = ${member}
     LIMIT 1`.execute(db);
  return rows.length > 0;
}

export async function reportPage(
  db: Db,
  boardId: string,
  key: string,
  afterId: number,
  limit: number,
): Promise<ReportRow[]> {
  const { rows } = await sql<{
    id: number;
    member_id: string;
    rank: number;
    title: string;
    body: string;
    award: string | null;
  }>`
    SELECT id, member_id, rank, title, body, award FROM notifications
     WHERE board_id = ${boardId} AND period_key = ${key} AND kind = 'period_report' AND id > ${afterId}
     ORDER BY id LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({
    id: r.id,
    member: r.member_id,
    rank: r.rank,
    title: r.title,
    body: r.body,
    award: r.award,
  }));
}

/** How many members a closed period ranked in its world scope of all categories. */
export async function rankedMemberCount(db: Db, boardId: string, key: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM period_results WHERE board_id = ${boardId} AND period_key = ${key} AND category = 'all' AND region = 'world'`.execute(
    db,
  );
  return rows[0]!.n;
}

export async function scopeAwards(db: Db, scope: Scope) {
  return db
    .selectFrom('awards')
    .select(['member_id', 'award', 'rank'])
    .where('board_id', '=', scope.board.id)
    .where('period_key', '=', scope.period)
    .where('category', '=', scope.category)
    .where('region', '=', scope.region)
    .orderBy('rank')
    .orderBy('member_id')
    .execute();
}

export async function memberAwards(db: Db, memberId: string) {
  return db
    .selectFrom('awards')
    .selectAll()
    .where('member_id', '=', memberId)
    .orderBy('granted_at', 'desc')
    .orderBy('board_id')
    .limit(1000)
    .execute();
}

export async function memberNotifications(db: Db, memberId: string, limit: number) {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('member_id', '=', memberId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
