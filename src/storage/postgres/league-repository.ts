import { sql } from 'kysely';
import type { Db } from './database.js';
import type { Board, League } from '../../domain/board.js';
import { entrantsLockSql } from './functions/entrant-rules.js';
import { placeMembersSql } from './functions/league-rules.js';

/** A SQL string literal (standard_conforming_strings: only quotes need doubling). */
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * Promotion and relegation of a closing period (docs/design/leagues.md), inside the close transaction after
 * the final standings: each bucket is ranked by the members' (all, world) final positions
 * (so by the board's tie rule); the top `promote` move up, then the bottom `relegate` of those
 * not promoted move down, never past either end. Writes each placement's bucket rank, outcome
 * and next tier, the members' tiers for their next period, and the league awards. Every write
 * is a pure function of the period's rows, so a repeated close writes the same.
 */
export async function closeLeague(db: Db, board: Board & { league: League }, key: string, now: Date): Promise<void> {
  const { tiers, promote, relegate } = board.league;
  await db
    .updateTable('periods')
    .set({ league_waiting: true })
    .where('board_id', '=', board.id)
    .where('key', '=', key)
    .execute();
  await sql`
    WITH ranked AS (
      SELECT lp.member_id, lp.tier,
             rank() OVER (PARTITION BY lp.bucket ORDER BY r.rank) AS bucket_rank,
             row_number() OVER (PARTITION BY lp.bucket ORDER BY r.position) AS place,
             count(*) OVER (PARTITION BY lp.bucket) AS n
        FROM league_placements lp
        JOIN period_results r ON r.board_id = lp.board_id AND r.period_key = lp.period_key
                             AND r.category = 'all' AND r.region = 'world' AND r.member_id = lp.member_id
       WHERE lp.board_id = ${board.id} AND lp.period_key = ${key}
    ),
    moved AS (
      SELECT x.member_id, x.bucket_rank,
             CASE WHEN x.place <= ${promote} AND x.i < ${tiers.length} THEN 'promoted'
                  WHEN x.place > ${promote} AND x.place > x.n - ${relegate} AND x.i > 1 THEN 'relegated'
                  ELSE 'kept' END AS outcome, x.i
        FROM (SELECT rk.*, array_position(${tiers}::text[], rk.tier) AS i FROM ranked rk) x
    )
    UPDATE league_placements lp
       SET bucket_rank = m.bucket_rank, outcome = m.outcome,
           next_tier = (${tiers}::text[])[m.i + CASE m.outcome WHEN 'promoted' THEN 1 WHEN 'relegated' THEN -1 ELSE 0 END]
      FROM moved m
     WHERE lp.board_id = ${board.id} AND lp.period_key = ${key} AND lp.member_id = m.member_id`.execute(db);
  // Placed but not ranked (excluded, or every event voided): they keep their tier.
  await sql`
    UPDATE league_placements SET outcome = 'kept', next_tier = tier
     WHERE board_id = ${board.id} AND period_key = ${key} AND outcome IS NULL`.execute(db);
  await sql`
    INSERT INTO league_tiers (board_id, member_id, tier)
    SELECT lp.board_id, lp.member_id, lp.next_tier
      FROM league_placements lp JOIN members m ON m.id = lp.member_id
     WHERE lp.board_id = ${board.id} AND lp.period_key = ${key}
     ORDER BY lp.member_id
    ON CONFLICT (board_id, member_id) DO UPDATE SET tier = EXCLUDED.tier`.execute(db);
  await sql`
    INSERT INTO awards (board_id, period_key, category, region, member_id, award, rank, granted_at)
    SELECT lp.board_id, lp.period_key, 'all', 'world', lp.member_id, a.award, lp.bucket_rank, ${now}
      FROM league_placements lp
      CROSS JOIN LATERAL (VALUES
        (CASE lp.outcome WHEN 'promoted' THEN 'league_promoted' WHEN 'relegated' THEN 'league_relegated' END),
        (CASE WHEN lp.bucket_rank = 1 THEN 'league_top1' END)) AS a(award)
     WHERE lp.board_id = ${board.id} AND lp.period_key = ${key} AND a.award IS NOT NULL
    ON CONFLICT DO NOTHING`.execute(db);
}

/**
 * Places the members who played in the periods after a just-closed one while its close was
 * pending, in the order of their first applied events (docs/design/leagues.md). Runs after the close commits,
 * in its own transaction under each period's entries lock: a batch that saw the previous period
 * still open has committed before this reads the ledger, and a later one sees it closed and
 * places its members itself. Repeating it places nobody twice.
 */
export async function placeWaitingMembers(db: Db, boardId: string, closedKey: string, now: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows: next } = await sql<{ key: string; starts_at: Date; ends_at: Date | null }>`
      SELECT n.key, n.starts_at, n.ends_at FROM periods c
        JOIN LATERAL (SELECT p.key, p.starts_at, p.ends_at, p.state FROM periods p
                       WHERE p.board_id = c.board_id AND p.starts_at > c.starts_at
                       ORDER BY p.starts_at LIMIT 1) n ON n.state = 'open'
       WHERE c.board_id = ${boardId} AND c.key = ${closedKey} AND c.state = 'closed'`.execute(trx);
    let placed = 0;
    for (const period of next) {
      await sql`SELECT pg_advisory_xact_lock(${sql.raw(entrantsLockSql('t.board', 't.period'))})
                  FROM (SELECT ${boardId}::text AS board, ${period.key}::text AS period) t`.execute(trx);
      // The shared rule is SQL text: the values go in as quoted literals.
      const firsts = `(SELECT DISTINCT ON (e.member_id) e.board_id, e.period_key, e.member_id, e.occurred_at, e.idempotency_key AS key
                         FROM score_events e
                        WHERE e.board_id = ${literal(boardId)} AND e.period_key = ${literal(period.key)} AND e.status = 'applied'
                          AND e.occurred_at >= ${literal(period.starts_at.toISOString())}::timestamptz
                          AND e.occurred_at < ${period.ends_at ? `${literal(period.ends_at.toISOString())}::timestamptz` : `'infinity'`}
                        ORDER BY e.member_id, e.occurred_at, e.idempotency_key COLLATE "C")`;
      const result = await sql.raw(placeMembersSql(firsts, `${literal(now.toISOString())}::timestamptz`)).execute(trx);
      placed += Number(result.numAffectedRows ?? 0);
    }
    await trx
      .updateTable('periods')
      .set({ league_waiting: false })
      .where('board_id', '=', boardId)
      .where('key', '=', closedKey)
      .execute();
    return placed;
  });
}

export interface Placement {
  tier: string;
  bucket: string;
}

export async function findPlacement(
  db: Db,
  boardId: string,
  periodKey: string,
  memberId: string,
): Promise<Placement | undefined> {
  return db
    .selectFrom('league_placements')
    .select(['tier', 'bucket'])
    .where('board_id', '=', boardId)
    .where('period_key', '=', periodKey)
    .where('member_id', '=', memberId)
    .executeTakeFirst();
}

/** The members of a bucket (at most bucketSize), by one index range. */
export async function bucketMembers(db: Db, boardId: string, periodKey: string, bucket: string): Promise<string[]> {
  const rows = await db
    .selectFrom('league_placements')
    .select('member_id')
    .where('board_id', '=', boardId)
    .where('period_key', '=', periodKey)
    .where('bucket', '=', bucket)
    .execute();
  return rows.map((r) => r.member_id);
}

/** The tier a member plays in next on each of the given league boards they have a tier on. */
export async function memberTiers(db: Db, memberId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('league_tiers')
    .select(['board_id', 'tier'])
    .where('member_id', '=', memberId)
    .execute();
  return new Map(rows.map((r) => [r.board_id, r.tier]));
}

/** Closed league periods whose waiting members a crash left unplaced. */
export async function periodsWithWaitingMembers(db: Db): Promise<Array<{ boardId: string; key: string }>> {
  const rows = await db
    .selectFrom('periods')
    .select(['board_id', 'key'])
    .where('league_waiting', '=', true)
    .where('state', '=', 'closed')
    .execute();
  return rows.map((r) => ({ boardId: r.board_id, key: r.key }));
}
