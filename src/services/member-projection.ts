import { retiredBefore } from '../domain/retention.js';
import type { AppContext } from '../context.js';
import type { AggregateState } from '../storage/postgres/events-repository.js';
import { memberProjection } from '../storage/postgres/moderation-repository.js';
import { requestScopeRebuilds } from './rebuild-service.js';
import { enqueue, enqueueBulk } from '../queue/enqueue.js';
import { Unavailable } from '../domain/errors.js';

/**
 * Writes the new state of aggregates changed by a moderation action. The change is already
 * committed; if Redis is down the caller is told to repeat the (idempotent) request, which
 * projects the current state again.
 */
export async function project(ctx: AppContext, aggregates: AggregateState[]): Promise<void> {
  try {
    const boards = await ctx.boards.getMany(aggregates.map((a) => a.board));
    requestScopeRebuilds(ctx, await ctx.leaderboard.project(aggregates, boards), 'moderation');
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, 'moderation saved but not projected');
    const known = ctx.failureOf(err);
    const dependency = known instanceof Unavailable ? known.dependency : undefined;
    throw new Unavailable(
      'the change is saved, but rankings could not be updated now; repeat the request to update them',
      undefined,
      dependency ? { dependency } : {},
    );
  }
}

/**
 * Queued before the change commits (the queue Redis is durable), run a few seconds later:
 * if the process dies between the commit and its own projection, this still brings Redis
 * level with Postgres. When the inline projection worked it is a no-op (same versions).
 */
export async function queueReprojection(ctx: AppContext, member: string, openOnly: boolean): Promise<void> {
  await enqueue(ctx.rebuildQueue, 'member', { member, openOnly }, reprojectionOptions(member));
}

/** `queueReprojection` of several members, in one round trip. */
export async function queueReprojections(
  ctx: AppContext,
  members: readonly string[],
  openOnly: boolean,
): Promise<void> {
  if (members.length === 0) return;
  await enqueueBulk(
    ctx.rebuildQueue,
    members.map((member) => ({ name: 'member', data: { member, openOnly }, opts: reprojectionOptions(member) })),
  );
}

const reprojectionOptions = (member: string) => ({
  delay: REPROJECT_DELAY_MS,
  deduplication: { id: `member|${member}` },
});

const REPROJECT_DELAY_MS = 5000;

/** Projects the member's current aggregates (of open periods only, or all). */
export async function reprojectMember(ctx: AppContext, member: string, openOnly: boolean): Promise<number> {
  const states = await memberProjection(ctx.db, member, { openOnly, retiredBefore: retentionCutoff(ctx) });
  const boards = await ctx.boards.getMany(states.map((a) => a.board));
  requestScopeRebuilds(ctx, await ctx.leaderboard.project(states, boards), 'moderation');
  return states.length;
}

/** Periods closed before this instant are read from their final results: moderation no longer projects into them. */
export const retentionCutoff = (ctx: AppContext) => retiredBefore(ctx.clock.now(), ctx.env.CLOSED_PERIOD_CACHE_HOURS);
