import type { StoredFunction } from './stored-function.js';

/**
 * The one description of an aggregate handed to the Redis projection. A row with no counted
 * events (all voided) or of an excluded member is projected as hidden. STABLE, which it is
 * (jsonb_build_object is stable): declared IMMUTABLE, the planner could not inline it into
 * laurel_apply_batch and called it once per aggregate.
 */
export const aggregateJson: StoredFunction = {
  name: 'laurel_aggregate_json',
  definition: `
CREATE OR REPLACE FUNCTION laurel_aggregate_json(a member_aggregates, regions boolean, excluded boolean)
RETURNS jsonb
LANGUAGE sql STABLE
AS $fn$
  SELECT jsonb_build_object(
    'board', a.board_id, 'period', a.period_key, 'category', a.category, 'member', a.member_id,
    'value', a.value::text,
    'subscore', a.subscore::text,
    'reachedSec', CASE WHEN a.event_count > 0 THEN floor(extract(epoch FROM a.reached_at))::bigint ELSE 0 END,
    'version', a.version,
    'region', CASE WHEN regions THEN a.region END,
    'hidden', excluded OR a.event_count = 0)
$fn$`,
};
