import { z } from 'zod';
import type { AppContext } from '../context.js';
import { BOARD_ID } from '../domain/ids.js';
import { listRollups } from '../storage/postgres/rollups-repository.js';
import { parseOrThrow } from '../domain/validation.js';

const HOUR = 3_600_000;

export const statsQuerySchema = z.object({
  board: z.string().regex(BOARD_ID).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});

export async function stats(ctx: AppContext, query: unknown) {
  const q = parseOrThrow(statsQuerySchema, query, 'query');
  const to = q.to ? new Date(q.to) : ctx.clock.now();
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - 24 * HOUR);
  const rows = await listRollups(ctx.db, { from, to, ...(q.board ? { board: q.board } : {}) });
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    rollups: rows.map((r) => ({
      board: r.board_id,
      period: r.period_key,
      hour: r.hour.toISOString(),
      applied: r.applied,
      duplicates: r.duplicates,
      rejected: {
        periodClosed: r.rejected_period_closed,
        conflict: r.rejected_conflict,
        outOfRange: r.rejected_out_of_range,
        outsideWindow: r.rejected_outside_window,
        boardFull: r.rejected_board_full,
        attemptsExhausted: r.rejected_attempts_exhausted,
      },
      members: r.members,
      lagP50Ms: r.lag_p50_ms,
      lagP99Ms: r.lag_p99_ms,
      voids: r.voids,
      rebuilds: r.rebuilds,
      rebuildMs: Number(r.rebuild_ms),
      moderation: { exclusions: r.exclusions, restores: r.restores, voids: r.voids, erasures: r.erasures },
    })),
  };
}
