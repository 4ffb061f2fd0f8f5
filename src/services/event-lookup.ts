import type { AppContext } from '../context.js';
import { Conflict, NotFound } from '../domain/errors.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { boardsHoldingKey } from '../storage/postgres/events-repository.js';
import { boardsPendingWith } from '../storage/redis/pending-events.js';

/**
 * Which board's event a key names, for the routes that take a key (status, void): an event
 * is (board, key), so `?board=` names it. Without it, the one board that holds the key (as
 * an event, a rejection or a pending mark); when several do, `409 ambiguous_key` lists them.
 */
export async function boardOfKey(ctx: AppContext, key: string, board: string | undefined): Promise<string> {
  if (board !== undefined) return board;
  const holding = new Set(await boardsHoldingKey(ctx.db, key));
  // Pending marks are per (board, key): one HMGET over the boards not found yet. Best effort,
  // like the marks themselves: with the leaderboard Redis down, only Postgres answers.
  const others = (await listBoards(ctx.db)).map((b) => b.id).filter((id) => !holding.has(id));
  for (const id of await boardsPendingWith(ctx.leaderboard, key, others).catch(() => [])) holding.add(id);
  const boards = [...holding].sort();
  if (boards.length === 0) throw new NotFound(`no event with idempotency key "${key}"`);
  if (boards.length > 1)
    throw new Conflict(
      `idempotency key "${key}" is held by ${boards.length} boards: name one with ?board=`,
      [{ path: 'board', message: boards.join(', ') }],
      { code: 'ambiguous_key' },
    );
  return boards[0]!;
}
