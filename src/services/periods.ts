import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { periodContaining, periodForKey, type PeriodWindow } from '../domain/period.js';
import { findPeriod, findPeriods, type PeriodState, type StoredPeriod } from '../storage/postgres/periods-repository.js';

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
}

/**
 * Resolves `current` or a period key without creating anything (SPEC §8.3). The current
 * period is always known; any other key must name a period that exists.
 */
export async function resolvePeriod(ctx: AppContext, board: Board, requested: string): Promise<ResolvedPeriod | null> {
  const window =
    requested === 'current'
      ? periodContaining(board.period, board.timezone, ctx.clock.now())
      : periodForKey(board.period, board.timezone, requested);
  if (!window) return null;
  const stored = await findPeriod(ctx.db, board.id, window.key);
  if (!stored && requested !== 'current') return null;
  return { stored: stored !== undefined, view: periodView(window, stored) };
}

/** The current period of each board, with one query for all of them. */
export async function currentPeriods(ctx: AppContext, boards: readonly Board[]): Promise<Map<string, PeriodView>> {
  const now = ctx.clock.now();
  const windows = boards.map((b) => ({ boardId: b.id, ...periodContaining(b.period, b.timezone, now) }));
  const stored = await findPeriods(ctx.db, windows);
  const byRef = new Map(stored.map((p) => [`${p.boardId}|${p.key}`, p]));
  return new Map(windows.map((w) => [w.boardId, periodView(w, byRef.get(`${w.boardId}|${w.key}`))]));
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
