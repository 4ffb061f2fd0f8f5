import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { NotFound } from '../domain/errors.js';
import { currentPeriodOf, periodForKey, type PeriodWindow } from '../domain/period.js';
import { isRetired } from '../domain/retention.js';
import type { PeriodState, StoredPeriod } from '../storage/postgres/periods-repository.js';

export interface PeriodView {
  key: string;
  startsAt: string;
  endsAt: string | null;
  state: PeriodState;
}

export interface ResolvedPeriod {
  view: PeriodView;
  /** False for a current period that no event has reached yet: it is shown, never created. */
  stored: boolean;
  /** Closed longer than CLOSED_PERIOD_CACHE_HOURS: read from its final results, never from Redis. */
  retired: boolean;
}

/**
 * Resolves `current` or a period key without creating anything (docs/design/periods.md). The current
 * period is known whenever the board is inside its window; any other key must name a period
 * that exists.
 */
export async function resolvePeriod(ctx: AppContext, board: Board, requested: string): Promise<ResolvedPeriod | null> {
  const [resolved] = await resolvePeriods(ctx, [board], requested);
  return resolved ?? null;
}

/**
 * Resolves `current` or a key on many boards with one query. Boards on which the key names
 * no period are left out; a current period without a row is shown with `stored: false`.
 */
export async function resolvePeriods(
  ctx: AppContext,
  boards: readonly Board[],
  requested: string,
): Promise<Array<ResolvedPeriod & { board: Board }>> {
  const now = ctx.clock.now();
  const windows = boards.flatMap((board) => {
    const window = requested === 'current' ? currentPeriodOf(board, now) : periodForKey(board, requested);
    return window ? [{ board, boardId: board.id, ...window }] : [];
  });
  const stored = await ctx.periods.getMany(windows);
  const byRef = new Map(stored.map((p) => [`${p.boardId}|${p.key}`, p]));
  return windows.flatMap((w) => {
    const row = byRef.get(`${w.boardId}|${w.key}`);
    if (!row && requested !== 'current') return [];
    const retired = row !== undefined && isRetired(row, now, ctx.env.CLOSED_PERIOD_CACHE_HOURS);
    return [{ board: w.board, stored: row !== undefined, retired, view: periodView(w, row) }];
  });
}

/** The 404 of a period that resolves to nothing: `current` outside the window says so. */
export function noPeriod(board: Board, requested: string): NotFound {
  if (requested !== 'current') return new NotFound(`period "${requested}" not found on board "${board.id}"`);
  const { startsAt, endsAt } = board.window ?? {};
  return new NotFound(
    `board "${board.id}" has no current period: it is outside its window` +
      (startsAt ? ` (opens ${startsAt}` : ' (') +
      (endsAt ? `${startsAt ? ', ' : ''}ends ${endsAt})` : ')') +
      '; name a period by its key',
  );
}

/** The current period of each board inside its window, with one query for all of them. */
export async function currentPeriods(ctx: AppContext, boards: readonly Board[]): Promise<Map<string, PeriodView>> {
  const resolved = await resolvePeriods(ctx, boards, 'current');
  return new Map(resolved.map((r) => [r.board.id, r.view]));
}

function periodView(window: PeriodWindow, stored: StoredPeriod | undefined): PeriodView {
  const source = stored ?? { ...window, state: 'open' as const };
  return {
    key: window.key,
    startsAt: source.startsAt.toISOString(),
    endsAt: source.endsAt ? source.endsAt.toISOString() : null,
    state: source.state,
  };
}
