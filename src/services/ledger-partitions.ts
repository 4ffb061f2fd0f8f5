import type { AppContext } from '../context.js';
import {
  LEDGER_MONTHS_AHEAD,
  addMonths,
  ensureMonthPartition,
  listLedgerPartitions,
  monthOf,
  monthsInDefaultPartition,
  type Month,
} from '../storage/postgres/ledger-partitions.js';

/**
 * Creates the ledger partitions of this month and the next LEDGER_MONTHS_AHEAD, and of every
 * month that has events waiting in the default partition (backdated events of a board that
 * never closes, a deployment that skipped ticks), moving those events out of it. Returns
 * the months it created. A month whose lock it cannot get now is left to the next tick:
 * until then its events wait, applied and counted, in the default partition.
 */
export async function ensureLedgerPartitions(ctx: Pick<AppContext, 'db' | 'log'>, now: Date): Promise<Month[]> {
  const current = monthOf(now);
  const wanted = new Set<Month>(Array.from({ length: LEDGER_MONTHS_AHEAD + 1 }, (_, i) => addMonths(current, i)));
  for (const month of await monthsInDefaultPartition(ctx.db)) wanted.add(month);
  const existing = new Set((await listLedgerPartitions(ctx.db)).map((p) => p.month));
  const created: Month[] = [];
  for (const month of [...wanted].sort()) {
    if (existing.has(month)) continue;
    try {
      if (await ensureMonthPartition(ctx.db, month)) created.push(month);
    } catch (err) {
      ctx.log.warn({ month, err: (err as Error).message }, 'ledger partition not created; the next tick retries');
    }
  }
  if (created.length > 0) ctx.log.info({ months: created }, 'ledger partitions created');
  return created;
}
