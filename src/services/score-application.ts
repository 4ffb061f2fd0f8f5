import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { scaleNumber } from '../domain/decimal.js';
import { ALL_CATEGORIES, WORLD } from '../domain/ids.js';
import { outsideWindow, periodContaining } from '../domain/period.js';
import { unscale } from '../domain/decimal.js';
import { openPeriodReader } from './standings/open-period-reader.js';
import {
  applyBatch,
  type ApplyBatchResult,
  type RoutedEvent,
  type EventOutcome,
} from '../storage/postgres/events-repository.js';
import { clearPendingCommand } from '../storage/redis/pending-events.js';
import { requestScopeRebuilds } from './rebuild-service.js';
import type { EventResult, ScoreJob, ScoreJobResult } from '../queue/score-events-queue.js';
import type { MemberInScope } from '../domain/scope.js';
import type { Placed } from '../domain/ranking.js';

const STALE_RETRIES = 3;

/** One queued intake request: its job id (for logs and fault hooks) and its payload. */
export interface HeldScoreJob {
  id?: string;
  data: ScoreJob;
}

/** Jobs applied together: their events in one batch, each job owning a range of its ords. */
export interface AppliedScoreJobs {
  jobs: readonly HeldScoreJob[];
  /** Ord of each job's first event in the batch; the next job's first ord ends its range. */
  firstOrd: number[];
  routed: RoutedEvent[];
  boards: Map<string, Board>;
  outcome: Extract<ApplyBatchResult, { results: unknown }>;
  before: Map<string, Placed>;
}

/**
 * Applies one intake batch: one Postgres round trip (laurel_apply_batch: ledger insert and
 * aggregate upsert in one transaction), then one Redis round trip (the projection).
 *
 * Safe to run any number of times: the ledger insert is idempotent per key, and the
 * projection is versioned, so a retry after a crash between the two steps, or two workers
 * racing on one member, end with Redis equal to Postgres.
 */
export async function processScoreJob(ctx: AppContext, job: ScoreJob, jobId?: string): Promise<ScoreJobResult> {
  const applied = await applyScoreJobs(ctx, [{ id: jobId, data: job }]);
  return (await publishScoreJobs(ctx, applied))[0]!;
}

/**
 * Step 1 for several jobs at once (src/jobs/score-coalescer.ts): their events as one batch in
 * one laurel_apply_batch call. Throws before anything is committed, or commits all of it.
 */
export async function applyScoreJobs(ctx: AppContext, jobs: readonly HeldScoreJob[]): Promise<AppliedScoreJobs> {
  const firstOrd: number[] = [];
  const events: ScoreJob['events'] = [];
  for (const job of jobs) {
    firstOrd.push(events.length);
    events.push(...job.data.events);
  }
  const boardIds = events.map((e) => e.posted.board);
  const wanting = (ord: number) => jobs[jobOfOrd(firstOrd, ord)]!.data.wantResults === true;

  for (let attempt = 0; attempt < STALE_RETRIES; attempt += 1) {
    const boards = await ctx.boards.getMany(boardIds, { fresh: attempt > 0 });
    const routed = events.map((event, ord) => routeEvent(event, ord, boards.get(event.posted.board)));
    const revisions = [...boards.values()].map((b) => ({ id: b.id, revision: b.revision }));
    const missing = boardIds.filter((id) => !boards.has(id));
    if (missing.length > 0) throw new Error(`boards not found: ${[...new Set(missing)].join(', ')}`);

    const asking = routed.filter((e) => wanting(e.ord));
    const before = asking.length > 0 ? await placementsBefore(ctx, asking, boards) : new Map<string, Placed>();
    // Text Postgres cannot store throws InvalidInput: the job then fails for good (src/jobs/job-errors.ts).
    const outcome = await applyBatch(ctx.db, routed, revisions, ctx.clock.now());
    if (outcome.stale) continue;
    return { jobs, firstOrd, routed, boards, outcome, before };
  }
  throw new Error('board definitions kept changing while the batch was applied');
}

/**
 * Step 2: the projection of what step 1 committed (one Redis round trip for all the jobs),
 * then each job's own result, in job order.
 */
export async function publishScoreJobs(ctx: AppContext, applied: AppliedScoreJobs): Promise<ScoreJobResult[]> {
  const { jobs, firstOrd, routed, boards, outcome, before } = applied;
  // Duplicates count where their first copy was stored, possibly on a board this batch does not name.
  const named = new Set(outcome.aggregates.map((a) => a.board));
  if ([...named].some((id) => !boards.has(id))) {
    for (const [id, board] of await ctx.boards.getMany(named)) boards.set(id, board);
  }

  await ctx.faults.afterCommit?.(jobs[0]!.id);
  const pendingKeys = routed.map((e) => e.key);
  const incomplete = await ctx.leaderboard.project(outcome.aggregates, boards, {
    createdPeriods: outcome.createdPeriods,
    extraWrite: clearPendingCommand(ctx.leaderboard, pendingKeys),
  });
  // Redis lost (part of) these periods: reads already fall back to Postgres; refill them.
  requestScopeRebuilds(ctx, incomplete, 'projection');
  recordOutcomes(ctx, outcome.results, routed);
  ctx.log.debug(
    { jobId: jobs[0]!.id, jobs: jobs.length, events: routed.length, aggregates: outcome.aggregates.length },
    'batch applied',
  );

  const results: ScoreJobResult[] = jobs.map((job) => (job.data.wantResults ? { results: [] } : {}));
  const asked = outcome.results
    .filter((o) => jobs[jobOfOrd(firstOrd, o.ord)]!.data.wantResults)
    .sort((a, b) => a.ord - b.ord);
  if (asked.length === 0) return results;
  const described = await describeOutcomes(ctx, asked, boards, before);
  asked.forEach((o, i) => results[jobOfOrd(firstOrd, o.ord)]!.results!.push(described[i]!));
  return results;
}

/** The job whose range of ords holds `ord` (ranges are in order: a binary search). */
function jobOfOrd(firstOrd: readonly number[], ord: number): number {
  let lo = 0;
  let hi = firstOrd.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (firstOrd[mid]! <= ord) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function recordOutcomes(ctx: AppContext, results: readonly EventOutcome[], routed: readonly RoutedEvent[]): void {
  const visibleAt = Date.now();
  for (const r of results) {
    if (r.outcome === 'applied') {
      ctx.metrics.events.inc({ outcome: 'applied', reason: '' });
      ctx.metrics.visibleLag.observe(Math.max(0, visibleAt - routed[r.ord]!.receivedAt.getTime()) / 1000);
    } else if (r.outcome === 'duplicate') {
      ctx.metrics.events.inc({ outcome: 'duplicate', reason: '' });
    } else {
      ctx.metrics.events.inc({ outcome: 'rejected', reason: r.outcome });
    }
  }
}

function routeEvent(event: ScoreJob['events'][number], ord: number, board: Board | undefined): RoutedEvent {
  const { posted } = event;
  const receivedAt = new Date(event.receivedAt);
  const occurredAt = posted.occurredAt ? new Date(posted.occurredAt) : receivedAt;
  const window = board ? periodContaining(board, occurredAt) : { key: 'all', startsAt: occurredAt, endsAt: null };
  // Intake checked the value; a board whose decimals changed since (only possible while it
  // had no events) may now refuse it, and that is recorded rather than rounded.
  const scaled = board ? scaleNumber(posted.value, board.decimals) : { ok: false as const, reason: '' };
  const subscore = board && posted.subscore !== undefined ? scaleNumber(posted.subscore, board.decimals) : null;
  const countable = scaled.ok && subscore?.ok !== false && (subscore === null || board?.subscore != null);
  return {
    ord,
    key: posted.idempotencyKey,
    boardId: posted.board,
    periodKey: window.key,
    startsAt: window.startsAt,
    endsAt: window.endsAt,
    memberId: posted.member,
    category: posted.category ?? null,
    value: scaled.ok ? scaled.scaled.toString() : null,
    subscore: subscore?.ok ? subscore.scaled.toString() : null,
    occurredAt,
    receivedAt,
    source: posted.source ?? null,
    payloadHash: event.payloadHash,
    metadata: posted.metadata ?? null,
    payload: posted,
    preReason: board && outsideWindow(board.window, occurredAt) ? 'outside_window' : countable ? null : 'out_of_range',
  };
}

const placementKey = (board: string, period: string, member: string) => JSON.stringify([board, period, member]);

/**
 * Each member's (all, world) placement in the periods the batch routes to, read before it
 * is applied (`previousRank`, `previousScore` of `?wait=true`): one Redis round trip, or
 * one statement per period Redis lacks. A period this batch is about to create is not in
 * Redis yet, so its read asks for no rebuild. A job retried after its commit finds its own
 * effect already there: its previous values are the ones after the batch.
 */
async function placementsBefore(ctx: AppContext, routed: readonly RoutedEvent[], boards: ReadonlyMap<string, Board>) {
  const queries = new Map<string, MemberInScope>();
  for (const e of routed) {
    const board = boards.get(e.boardId);
    if (board)
      queries.set(placementKey(e.boardId, e.periodKey, e.memberId), {
        board,
        period: e.periodKey,
        category: ALL_CATEGORIES,
        region: WORLD,
        member: e.memberId,
      });
  }
  const placed = await openPeriodReader.placeMany(ctx, [...queries.values()], { requestRebuilds: false });
  return new Map([...queries.keys()].map((key, i) => [key, placed[i]!]));
}

/**
 * Per-event results for `?wait=true` (outcomes in ord order): status, the member's score and rank on the board, and
 * those before the batch (null when unranked then, or when the event counted elsewhere).
 */
async function describeOutcomes(
  ctx: AppContext,
  sorted: readonly EventOutcome[],
  boards: ReadonlyMap<string, Board>,
  before: ReadonlyMap<string, Placed>,
): Promise<EventResult[]> {
  const counted = sorted.filter((o) => o.outcome === 'applied' || o.outcome === 'duplicate');
  // A period not complete in Redis (lost, or being rebuilt) is ranked from Postgres.
  const placements = await openPeriodReader.placeMany(
    ctx,
    counted.map((o) => ({
      board: boards.get(o.board)!,
      period: o.period,
      category: ALL_CATEGORIES,
      region: WORLD,
      member: o.member,
    })),
  );
  const byOrd = new Map(counted.map((o, i) => [o.ord, placements[i]!]));
  return sorted.map((o) => {
    const placed = byOrd.get(o.ord);
    const previous = before.get(placementKey(o.board, o.period, o.member));
    const board = boards.get(o.board)!;
    const rejected = o.outcome !== 'applied' && o.outcome !== 'duplicate';
    return {
      idempotencyKey: o.key,
      status: rejected ? 'rejected' : (o.outcome as 'applied' | 'duplicate'),
      ...(rejected ? { reason: o.outcome } : {}),
      period: o.period,
      score: placed?.scaled == null ? null : unscale(placed.scaled, board.decimals),
      rank: placed?.rank ?? null,
      previousScore: previous?.scaled == null ? null : unscale(previous.scaled, board.decimals),
      previousRank: previous?.rank ?? null,
    };
  });
}
