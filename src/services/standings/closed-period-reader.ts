import { cacheFirst } from './cache-first.js';
import { finalResults } from './retired-period-reader.js';

/**
 * A closed period not retired yet. Its Redis keys, while they are complete, hold the
 * ranking of the close, which is its final results (moderation projects into open periods
 * only, and an erasure drops a closed period's completeness marks). When Redis lacks the
 * category (lost, flushed, dropped by an erasure, or unreachable) the answer comes from the
 * final results, exactly as for a retired period, and no rebuild is asked for: a rebuild
 * refills from aggregates, which later exclusions, voids and erasures changed.
 */
export const closedPeriodReader = cacheFirst(finalResults, { rebuildOnMiss: false });
