import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { ALL_CATEGORIES, BOARD_ID } from '../domain/ids.js';
import { periodContaining, type PeriodCategory } from '../domain/period.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { listOpenPeriods } from '../storage/postgres/periods-repository.js';
import { findPeriod } from '../storage/postgres/periods-repository.js';
import { isRetired } from '../domain/retention.js';
import { isPeriodArchived } from '../storage/postgres/ledger-partitions.js';
import {
  rebuildJobOptions,
  scopeDedupId,
  type RequestJob,
  type ScopeJob,
  type ScopeJobResult,
} from '../queue/rebuild-queue.js';
import { enqueue, enqueueFlow } from '../queue/enqueue.js';
import {
  claimInstanceMarkers,
  takeEarlierLayoutMarkers,
  releaseInstanceMarkers,
} from '../storage/redis/instance-markers.js';
import { KeyLayoutRecord } from '../storage/redis/key-layout.js';
import { NotFound, Conflict, InvalidInput } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';

/** What an operator asks for (the admin API, the CLI); any other trigger is automatic. */
const OPERATOR_TRIGGERS = new Set(['api', 'cli']);

/**
 * Why a scope rebuild must leave its period alone, or null. A retired period is never
 * rebuilt into Redis. A closed one is not rebuilt automatically (a read, a projection, a
 * moderation action): its final results answer its reads once Redis lacks it, and a
 * rebuild from aggregates would show later exclusions, voids and erasures the final
 * results do not. An operator may still rebuild a closed period that is not retired.
 */
export function rebuildSkips(
  period: { state: string; closedAt: Date | null },
  trigger: string | undefined,
  now: Date,
  cacheHours: number,
): 'retired' | 'closed' | null {
  if (isRetired(period, now, cacheHours)) return 'retired';
  if (period.state === 'closed' && !OPERATOR_TRIGGERS.has(trigger ?? '')) return 'closed';
  return null;
}

/**
 * Asks for one category of a period to be rebuilt, at most once at a time: while such a
 * job waits or runs, asking again is a no-op (BullMQ deduplication).
 */
export async function requestScopeRebuild(ctx: AppContext, scope: PeriodCategory, trigger: string): Promise<void> {
  const data: ScopeJob = { ...scope, trigger };
  await enqueue(ctx.rebuildQueue, 'scope', data, { deduplication: { id: scopeDedupId(scope) }, priority: 1 });
}

/** Best effort from a read or a projection: a failure to enqueue must not fail the caller. */
export function requestScopeRebuilds(ctx: AppContext, scopes: readonly PeriodCategory[], trigger: string): void {
  for (const scope of scopes) {
    requestScopeRebuild(ctx, scope, trigger).catch((err: Error) =>
      ctx.log.warn({ ...scope, err: err.message }, 'could not enqueue a scope rebuild'),
    );
  }
}

export const rebuildRequestSchema = z
  .object({
    board: z.string().regex(BOARD_ID).optional(),
    period: z.string().max(32).optional(),
    fromEvents: z.boolean().default(false),
  })
  .strict();

interface Target {
  board: Board;
  period: string;
  current: boolean;
}

async function targetsOf(ctx: AppContext, request: z.infer<typeof rebuildRequestSchema>): Promise<Target[]> {
  const boards = request.board
    ? [await ctx.boards.get(request.board)].filter((b): b is Board => !!b)
    : await listBoards(ctx.db);
  if (request.board && boards.length === 0) throw new NotFound(`board "${request.board}" not found`);
  if (request.period && !request.board) {
    throw new InvalidInput('invalid rebuild request', [{ path: 'period', message: 'needs a board' }]);
  }
  const now = ctx.clock.now();
  const targets: Target[] = [];
  for (const board of boards) {
    const currentKey = periodContaining(board, now).key;
    if (request.period) {
      const key = request.period === 'current' ? currentKey : request.period;
      const stored = await findPeriod(ctx.db, board.id, key);
      if (!stored) throw new NotFound(`period "${key}" not found on board "${board.id}"`);
      if (isRetired(stored, now, ctx.env.CLOSED_PERIOD_CACHE_HOURS)) {
        throw new Conflict(
          `period "${key}" of board "${board.id}" closed more than CLOSED_PERIOD_CACHE_HOURS (${ctx.env.CLOSED_PERIOD_CACHE_HOURS}) hours ago; its standings are read from its final results, which a rebuild does not change`,
          [{ path: 'period', message: 'a retired closed period is not rebuilt into Redis' }],
        );
      }
      if (request.fromEvents && (await isPeriodArchived(ctx.db, board.id, key))) {
        throw new Conflict(
          `the events of period "${key}" of board "${board.id}" are archived; its stored aggregates and results stand`,
          [{ path: 'fromEvents', message: 'not possible for a period whose ledger month was archived' }],
        );
      }
      targets.push({ board, period: key, current: key === currentKey });
    } else {
      for (const p of await listOpenPeriods(ctx.db, board.id))
        targets.push({ board, period: p.key, current: p.key === currentKey });
    }
  }
  return targets;
}

/**
 * One rebuild = one BullMQ flow: a `request` parent and one `scope` child per
 * (board, period, category), run in parallel by the workers, current periods first.
 */
export async function requestRebuild(
  ctx: AppContext,
  body: unknown,
  trigger: string,
): Promise<{ rebuildId: string; scopes: number }> {
  const request = parseOrThrow(rebuildRequestSchema, body ?? {}, 'rebuild request');
  const targets = await targetsOf(ctx, request);
  const rebuildId = randomUUID();
  const children = targets.flatMap((t) =>
    [ALL_CATEGORIES, ...t.board.categories].map((category) => ({
      name: 'scope' as const,
      data: { board: t.board.id, period: t.period, category, fromEvents: request.fromEvents, trigger },
      opts: { ...rebuildJobOptions, priority: t.current ? 1 : 10 },
    })),
  );
  const data: RequestJob = {
    board: request.board ?? null,
    period: request.period ?? null,
    fromEvents: request.fromEvents,
    trigger,
    requestedAt: ctx.clock.now().toISOString(),
  };
  await enqueueFlow(
    ctx.rebuildFlow,
    ctx.rebuildQueue,
    { name: 'request', data, opts: { ...rebuildJobOptions, jobId: rebuildId } },
    children,
  );
  ctx.log.info({ rebuildId, scopes: children.length, trigger }, 'rebuild requested');
  return { rebuildId, scopes: children.length };
}

export async function rebuildStatus(ctx: AppContext, rebuildId: string) {
  const job = /^[0-9a-f-]{36}$/.test(rebuildId) ? await ctx.rebuildQueue.getJob(rebuildId) : undefined;
  if (!job || job.name !== 'request') throw new NotFound(`no rebuild with id "${rebuildId}"`);
  const state = await job.getState();
  const counts = await job.getDependenciesCount();
  const done = await job.getChildrenValues<ScopeJobResult>();
  const failed = counts.failed ?? 0;
  const total = (counts.processed ?? 0) + (counts.unprocessed ?? 0) + failed + (counts.ignored ?? 0);
  const scopes = Object.values(done).sort((a, b) =>
    `${a.board}|${a.period}|${a.category}`.localeCompare(`${b.board}|${b.period}|${b.category}`),
  );
  return {
    rebuildId,
    state,
    request: job.data as RequestJob,
    progress: {
      done: scopes.length,
      failed,
      total,
      percent: total === 0 ? 100 : Math.round((scopes.length / total) * 100),
    },
    scopes,
    startedAt: new Date(job.timestamp).toISOString(),
    finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    durationMs: job.finishedOn ? job.finishedOn - job.timestamp : null,
  };
}

/**
 * At worker start-up: a leaderboard Redis without Laurel's marker is new or lost its data,
 * so every open period is rebuilt (current periods first). A cluster keeps one marker per
 * master, so a master that came back empty is noticed too. A Redis last used by 0.2.0 is
 * not rebuilt here: its reads go to Postgres, and the key layout handover rebuilds once no
 * 0.2.0 process writes any more. Returns the rebuild id, if any.
 */
export async function rebuildIfLeaderboardLost(ctx: AppContext): Promise<string | null> {
  const now = ctx.clock.now().toISOString();
  const earlier = await takeEarlierLayoutMarkers(ctx.leaderboard, ctx.env.REDIS_PREFIX, async () => {
    ctx.leaderboard.access.reads = false;
    await new KeyLayoutRecord(ctx.leaderboard.redis, ctx.env.REDIS_PREFIX).noteEarlierWrites(ctx.env.LAYOUT_QUIET_MS);
  });
  if (earlier) ctx.log.info('leaderboard Redis was used by 0.2.0: reads from Postgres until the key layout handover');
  if (!(await claimInstanceMarkers(ctx.leaderboard, ctx.env.REDIS_PREFIX, now)) || earlier) return null;
  // A marker left behind by a failed request would stop the next attempt from rebuilding.
  const { rebuildId, scopes } = await requestRebuild(ctx, {}, 'startup').catch(async (err: unknown) => {
    await releaseInstanceMarkers(ctx.leaderboard, ctx.env.REDIS_PREFIX).catch(() => undefined);
    throw err;
  });
  ctx.log.info({ rebuildId, scopes }, 'leaderboard Redis had no Laurel data: rebuilding open periods');
  return rebuildId;
}
