import { sql } from 'kysely';
import type { Db } from './database.js';

export interface RollupHour {
  board: string;
  period: string;
  hourMs: number;
}

/**
 * Recomputes the hourly rollups (per board, period and hour) from `from` on, from the ledger
 * and the insert-only logs (duplicates; rejections; rebuilds; moderation: exclusions,
 * restores, voids, erasures), in one statement; each run overwrites the counts of the hours
 * it covers. An event is counted in the hour it was applied (`applied_at`): as applied (a
 * voided one too: voids are counted apart) unless it is beyond its member's attempts
 * (`exhausted`, counted as that rejection). The lags are not computed here (they are measured
 * up to visible, in the leaderboard Redis: `writeRollupLags`). Returns the hours written.
 */
export async function writeRollups(db: Db, from: Date, now: Date): Promise<RollupHour[]> {
  const { rows } = await sql<{ board_id: string; period_key: string; hour: Date }>`
    WITH applied AS (
      SELECT board_id, period_key, date_trunc('hour', applied_at) AS hour,
             count(*) FILTER (WHERE status <> 'exhausted') AS n,
             count(*) FILTER (WHERE status = 'exhausted') AS exhausted,
             count(DISTINCT member_id) FILTER (WHERE status <> 'exhausted') AS members
        FROM score_events WHERE applied_at >= ${from} GROUP BY 1, 2, 3
    ),
    dups AS (
      SELECT board_id, period_key, date_trunc('hour', at) AS hour, sum(duplicates) AS n
        FROM duplicate_log WHERE at >= ${from} GROUP BY 1, 2, 3
    ),
    rej AS (
      SELECT board_id, coalesce(period_key, '') AS period_key, date_trunc('hour', rejected_at) AS hour,
             count(*) FILTER (WHERE reason = 'period_closed') AS closed,
             count(*) FILTER (WHERE reason = 'conflict') AS conflict,
             count(*) FILTER (WHERE reason = 'out_of_range') AS out_of_range,
             count(*) FILTER (WHERE reason = 'outside_window') AS outside_window,
             count(*) FILTER (WHERE reason = 'board_full') AS board_full
        FROM rejections WHERE rejected_at >= ${from} GROUP BY 1, 2, 3
    ),
    moderation AS (
      SELECT board_id, period_key, date_trunc('hour', at) AS hour,
             count(*) FILTER (WHERE kind = 'void') AS voids,
             count(*) FILTER (WHERE kind = 'exclusion') AS exclusions,
             count(*) FILTER (WHERE kind = 'restore') AS restores,
             count(*) FILTER (WHERE kind = 'erasure') AS erasures
        FROM moderation_log WHERE at >= ${from} GROUP BY 1, 2, 3
    ),
    rebuilds AS (
      SELECT board_id, period_key, date_trunc('hour', finished_at) AS hour, count(*) AS n, sum(duration_ms) AS ms
        FROM rebuild_log WHERE finished_at >= ${from} GROUP BY 1, 2, 3
    ),
    keys AS (
      SELECT board_id, period_key, hour FROM applied UNION SELECT board_id, period_key, hour FROM dups
      UNION SELECT board_id, period_key, hour FROM rej
      UNION SELECT board_id, period_key, hour FROM rebuilds UNION SELECT board_id, period_key, hour FROM moderation
    ),
    written AS (
      INSERT INTO rollups (board_id, period_key, hour, applied, duplicates, rejected_period_closed, rejected_conflict,
                           rejected_out_of_range, rejected_outside_window, rejected_board_full,
                           rejected_attempts_exhausted, members, voids, rebuilds, rebuild_ms,
                           exclusions, restores, erasures, computed_at)
      SELECT k.board_id, k.period_key, k.hour, coalesce(a.n, 0), coalesce(d.n, 0), coalesce(r.closed, 0),
             coalesce(r.conflict, 0), coalesce(r.out_of_range, 0), coalesce(r.outside_window, 0),
             coalesce(r.board_full, 0), coalesce(a.exhausted, 0), coalesce(a.members, 0),
             coalesce(o.voids, 0), coalesce(b.n, 0), coalesce(b.ms, 0),
             coalesce(o.exclusions, 0), coalesce(o.restores, 0), coalesce(o.erasures, 0), ${now}
        FROM keys k
        LEFT JOIN applied a USING (board_id, period_key, hour)
        LEFT JOIN dups d USING (board_id, period_key, hour)
        LEFT JOIN rej r USING (board_id, period_key, hour)
        LEFT JOIN rebuilds b USING (board_id, period_key, hour)
        LEFT JOIN moderation o USING (board_id, period_key, hour)
      ON CONFLICT (board_id, period_key, hour) DO UPDATE SET
        applied = excluded.applied, duplicates = excluded.duplicates,
        rejected_period_closed = excluded.rejected_period_closed, rejected_conflict = excluded.rejected_conflict,
        rejected_out_of_range = excluded.rejected_out_of_range,
        rejected_outside_window = excluded.rejected_outside_window,
        rejected_board_full = excluded.rejected_board_full,
        rejected_attempts_exhausted = excluded.rejected_attempts_exhausted, members = excluded.members,
        voids = excluded.voids, rebuilds = excluded.rebuilds, rebuild_ms = excluded.rebuild_ms,
        exclusions = excluded.exclusions, restores = excluded.restores, erasures = excluded.erasures,
        computed_at = excluded.computed_at
      RETURNING board_id, period_key, hour
    )
    SELECT board_id, period_key, hour FROM written`.execute(db);
  return rows.map((r) => ({ board: r.board_id, period: r.period_key, hourMs: new Date(r.hour).getTime() }));
}

/** Sets the lag percentiles of rollup hours, in one statement. */
export async function writeRollupLags(
  db: Db,
  lags: ReadonlyArray<RollupHour & { p50: number; p99: number }>,
): Promise<void> {
  if (lags.length === 0) return;
  await sql`
    UPDATE rollups r SET lag_p50_ms = l.p50, lag_p99_ms = l.p99
      FROM unnest(${lags.map((l) => l.board)}::text[], ${lags.map((l) => l.period)}::text[],
                  ${lags.map((l) => new Date(l.hourMs).toISOString())}::timestamptz[],
                  ${lags.map((l) => l.p50)}::float8[], ${lags.map((l) => l.p99)}::float8[])
             AS l(board_id, period_key, hour, p50, p99)
     WHERE r.board_id = l.board_id AND r.period_key = l.period_key AND r.hour = l.hour`.execute(db);
}

export async function listRollups(db: Db, range: { from: Date; to: Date; board?: string }) {
  let select = db.selectFrom('rollups').selectAll().where('hour', '>=', range.from).where('hour', '<', range.to);
  if (range.board) select = select.where('board_id', '=', range.board);
  return select.orderBy('hour').orderBy('board_id').orderBy('period_key').execute();
}
