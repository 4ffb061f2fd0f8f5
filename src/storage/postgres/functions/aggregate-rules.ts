/**
 * The aggregation rules, written once and composed into the stored functions that need them
 * (laurel_apply_batch folds a batch in, laurel_recompute_aggregates rebuilds from the ledger).
 * They are SQL text spliced in when a definition is built, not helper functions called per
 * row: the planner sees them as plain expressions, so they cost nothing at run time.
 *
 * Aggregation is order-free: `best` keeps the best (value, subscore) and the earliest time
 * it was reached, `sum` adds both, `last` keeps the event with the greatest (occurred_at, key), so any
 * arrival order and any split into batches give the same row.
 */

/** Every event counts in category 'all' and in its own category, if any (filter on `k.cat IS NOT NULL`). */
export const scopesOf = (category: string) => `CROSS JOIN LATERAL (VALUES ('all'::text), (${category})) AS k(cat)`;

/**
 * Ranks the events of `source` (alias x; columns value, subscore (null counts as 0),
 * occurred_at, idempotency_key, aggregation, sort_order, sub_order (null: no subscore))
 * within each aggregate (`partition`): row rn = 1 is the event the aggregate keeps, beside
 * the aggregate's totals, latest time and event count. `best` keeps the best
 * (value, subscore) pair, reached earliest.
 */
export const rankedEvents = (source: string, partition: string) => `
    SELECT x.*,
           row_number() OVER w AS rn,
           sum(x.value) OVER p AS total,
           sum(coalesce(x.subscore, 0)) OVER p AS sub_total,
           max(x.occurred_at) OVER p AS latest,
           count(*) OVER p AS n
      FROM ${source} x
    WINDOW p AS (PARTITION BY ${partition}),
           w AS (PARTITION BY ${partition}
                 ORDER BY CASE WHEN x.aggregation = 'best' THEN CASE WHEN x.sort_order = 'desc' THEN -x.value ELSE x.value END END,
                          CASE WHEN x.aggregation = 'best' THEN CASE WHEN x.sub_order = 'asc' THEN coalesce(x.subscore, 0) ELSE -coalesce(x.subscore, 0) END END,
                          CASE WHEN x.aggregation = 'best' THEN x.occurred_at END,
                          x.occurred_at DESC, x.idempotency_key DESC)`;

/** The aggregate of a ranked row r with rn = 1 (see rankedEvents): value, subscore, reached_at, last_key, n. */
export const winnerColumns = (
  r: string,
) => `(CASE WHEN ${r}.aggregation = 'sum' THEN ${r}.total ELSE ${r}.value END)::bigint AS value,
           (CASE WHEN ${r}.aggregation = 'sum' THEN ${r}.sub_total ELSE coalesce(${r}.subscore, 0) END)::bigint AS subscore,
           CASE WHEN ${r}.aggregation = 'sum' THEN ${r}.latest ELSE ${r}.occurred_at END AS reached_at,
           ${r}.idempotency_key AS last_key, ${r}.n::int AS n`;

type Rule = 'sum' | 'last' | `best-${'desc' | 'asc'}-${'desc' | 'asc'}`;

/**
 * How an aggregate row `a` absorbs `excluded`, the aggregate of newer events of the same
 * member. A row whose events were all voided (event_count = 0, value 0, reached_at
 * -infinity) counts as absent: the merge starts afresh from it.
 */
function mergeInto(rule: Rule): string {
  const later = `(excluded.reached_at, excluded.last_key) > (a.reached_at, a.last_key)`;
  if (rule === 'sum') {
    return `value = a.value + excluded.value,
      subscore = a.subscore + excluded.subscore,
      reached_at = greatest(a.reached_at, excluded.reached_at),
      last_key = CASE WHEN ${later} THEN excluded.last_key ELSE a.last_key END`;
  }
  if (rule === 'last') {
    return `value = CASE WHEN ${later} THEN excluded.value ELSE a.value END,
      subscore = CASE WHEN ${later} THEN excluded.subscore ELSE a.subscore END,
      reached_at = greatest(a.reached_at, excluded.reached_at),
      last_key = CASE WHEN ${later} THEN excluded.last_key ELSE a.last_key END`;
  }
  // best: the better (value, subscore) pair wins; on a tie of both, the earlier time (and that event's key).
  const [, order, subOrder] = rule.split('-');
  const op = (o: string | undefined) => (o === 'desc' ? '>' : '<');
  const better = `a.event_count = 0 OR excluded.value ${op(order)} a.value
                  OR (excluded.value = a.value AND excluded.subscore ${op(subOrder)} a.subscore)`;
  const same = `excluded.value = a.value AND excluded.subscore = a.subscore`;
  return `value = CASE WHEN ${better} THEN excluded.value ELSE a.value END,
      subscore = CASE WHEN ${better} THEN excluded.subscore ELSE a.subscore END,
      reached_at = CASE WHEN ${better} THEN excluded.reached_at
                        WHEN NOT (${same}) THEN a.reached_at
                        ELSE least(a.reached_at, excluded.reached_at) END,
      last_key = CASE WHEN ${better} OR (${same} AND excluded.reached_at < a.reached_at)
                      THEN excluded.last_key ELSE a.last_key END`;
}

const best = (order: 'desc' | 'asc', subOrder: 'desc' | 'asc') =>
  `c.aggregation = 'best' AND c.sort_order = '${order}' AND coalesce(c.sub_order, 'desc') = '${subOrder}'`;

const FILTER: Record<Rule, string> = {
  sum: `c.aggregation = 'sum'`,
  'best-desc-desc': best('desc', 'desc'),
  'best-desc-asc': best('desc', 'asc'),
  'best-asc-desc': best('asc', 'desc'),
  'best-asc-asc': best('asc', 'asc'),
  last: `c.aggregation = 'last'`,
};

/**
 * CTEs (up_sum, up_best_desc_desc, ...) that fold `source` (alias c: one aggregate per row,
 * with its board's aggregation, sort order and subscore order) into member_aggregates, one upsert per rule so
 * that each ON CONFLICT clause is a plain expression. Rows in key order: the lock order.
 */
export const mergeAggregates = (source: string, now: string) =>
  (Object.keys(FILTER) as Rule[])
    .map(
      (rule) => `up_${rule.replaceAll('-', '_')} AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, subscore, reached_at, last_key, event_count, region, updated_at)
    SELECT c.board_id, c.period_key, c.cat, c.member_id, c.value, c.subscore, c.reached_at, c.last_key, c.n, c.region, ${now}
      FROM ${source} c WHERE ${FILTER[rule]}
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      ${mergeInto(rule)},
      event_count = a.event_count + excluded.event_count,
      region = excluded.region,
      version = a.version + 1,
      updated_at = excluded.updated_at
    RETURNING 1
  )`,
    )
    .join(',\n  ');
