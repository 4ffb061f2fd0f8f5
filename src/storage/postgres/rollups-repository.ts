import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * Recomputes the hourly rollups (per board, period and hour) from `from` on, from the ledger
 * and the insert-only logs (duplicates; moderation: exclusions, restores, voids, erasures), in one statement; each run overwrites the hours it covers.
 * Lag is received -> applied (the Postgres commit). Returns the rows written.
 */
export async function writeRollups(db: Db, from: Date, now: Date): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH applied AS (
      SELECT board_id, period_key, date_trunc('hour', applied_at) AS hour, count(*) AS n,
             count(DISTINCT member_id) AS members,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM applied_at - received_at) * 1000) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM applied_at - received_at) * 1000) AS p99
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
             count(*) FILTER (WHERE reason = 'out_of_range') AS out_of_range
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
                           rejected_out_of_range, members, lag_p50_ms, lag_p99_ms, voids, rebuilds, rebuild_ms,
                           exclusions, restores, erasures, computed_at)
      SELECT k.board_id, k.period_key, k.hour, coalesce(a.n, 0), coalesce(d.n, 0), coalesce(r.closed, 0),
             coalesce(r.conflict, 0), coalesce(r.out_of_range, 0), coalesce(a.members, 0), a.p50, a.p99,
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
        rejected_out_of_range = excluded.rejected_out_of_range, members = excluded.members,
        lag_p50_ms = excluded.lag_p50_ms, lag_p99_ms = excluded.lag_p99_ms, voids = excluded.voids,
        rebuilds = excluded.rebuilds, rebuild_ms = excluded.rebuild_ms, exclusions = excluded.exclusions,
        restores = excluded.restores, erasures = excluded.erasures, computed_at = excluded.computed_at
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM written`.execute(db);
  return rows[0]!.n;
}

export async function listRollups(db: Db, range: { from: Date; to: Date; board?: string }) {
  let select = db.selectFrom('rollups').selectAll().where('hour', '>=', range.from).where('hour', '<', range.to);
  if (range.board) select = select.where('board_id', '=', range.board);
  return select.orderBy('hour').orderBy('board_id').orderBy('period_key').execute();
}
