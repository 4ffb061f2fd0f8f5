import { aggregateJson } from './aggregate-json.js';
import { applyBatch } from './apply-batch.js';
import { ensureLedgerPartition } from './ensure-ledger-partition.js';
import { recomputeAggregates } from './recompute-aggregates.js';
import type { StoredFunction } from './stored-function.js';

export type { StoredFunction } from './stored-function.js';

/** Every stored function, in install order: a SQL-language function before its callers. */
export const STORED_FUNCTIONS: readonly StoredFunction[] = [
  aggregateJson,
  ensureLedgerPartition,
  recomputeAggregates,
  applyBatch,
];
