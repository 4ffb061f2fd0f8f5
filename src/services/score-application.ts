import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { scaleNumber } from '../domain/decimal.js';
import { ALL_CATEGORIES, WORLD } from '../domain/ids.js';
import { outsideWindow, periodContaining } from '../domain/period.js';
import { startOfHour } from '../domain/lag-histogram.js';
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
import {
  requestsOf,
  resultOf,
  type EventResult,
  type QueuedEvent,
  type QueuedRequest,
  type ScoreJob,
  type ScoreJobResult,
} from '../queue/score-events-queue.js';
import { Unavailable } from '../domain/errors.js';
import type { MemberInScope } from '../domain/scope.js';
import type { Placed } from '../domain/ranking.js';

const STALE_RETRIES = 3;

/** Requests applied together: their events in one batch, each request owning a range of its ords. */
interface AppliedRequests {
  requests: readonly QueuedRequest[];
  /** Ord of each request's first event in the batch; the next request's first ord ends its range. */
  firstOrd: number[];
  routed: RoutedEvent[];
  boards: Map<string, Board>;
  outcome: Extract<ApplyBatchResult, { results: unknown }>;
  before: Map<string, Placed>;
  /** The `applied_at` of the batch's ledger rows: its hour is the rollup hour of their lags. */
  appliedAt: Date;
}

/** A request's own end: its results (when it asked for them), or what failed it. */
type Settled = { results: EventResult[] | undefined } | { error: unknown };

/**
 * Applies one score job: the intake requests a web process queued together, in their
 * arrival order. Usually one laurel_apply_batch call (ledger insert and aggregate upsert in
 * one transaction) and one Redis round trip (the projection) for the whole job; requests
 * that must meet each other's effect go in later rounds (roundsOf), each a call of its own.
 * Each request gets its own results, as if it had come alone.
 *
 * Safe to run any number of times: the ledger insert is idempotent per key, and the
 * projection is versioned, so a retry after a crash between the two steps (or between two
 * rounds), or two workers racing on one member, end with Redis equal to Postgres. A request
 * that fails for a reason of its own (text Postgres cannot store) does not hold back the
 * others: they are applied, then the job fails with its error. An outage fails the job at
 * once; BullMQ retries it, and the rounds already committed are duplicates then.
 */
export async function processScoreJob(ctx: AppContext, job: ScoreJob, jobId?: string): Promise<ScoreJobResult> {
  const requests = requestsOf(job);
  const perRequest: Array<EventResult[] | undefined> = [];
  let failure: { error: unknown } | undefined;
  for (const round of await roundsOf(ctx, requests)) {
    const settled = await applyRound(
      ctx,
      round.map((i) => requests[i]!),
      jobId,
    );
    round.forEach((i, k) => {
      const own = settled[k]!;
      if ('error' in own) failure ??= own;
      else perRequest[i] = own.results;
    });
  }
  if (failure) throw failure.error;
  return resultOf(job, perRequest);
}

/**
 * Requests sharing an event (a board's idempotency key), or a member of a board, are applied one after the
 * other, in arrival order, never in one call: inside a call a repeated key follows its first
 * copy and a member's events are judged together (a sum's range, the placement before the
 * batch that `previousRank` reports), while across requests each must be judged as if it had
 * come alone. On a board whose entry depends on arrival (maxMembers entrants, league buckets:
 * within a batch by first events, across batches in the order applied), every request that
 * touches the board comes after the previous one, so requests enter as they arrived. So each
 * request goes to the round after the last one holding any of its keys, members or
 * arrival-ordered boards. Returns the rounds, each a list of request indexes in arrival order.
 */
async function roundsOf(ctx: AppContext, requests: readonly QueuedRequest[]): Promise<number[][]> {
  if (requests.length === 1) return [[0]];
  const boards = await ctx.boards.getMany(new Set(requests.flatMap((r) => r.events.map((e) => e.posted.board))));
  const arrivalOrdered = (id: string) => {
    const board = boards.get(id);
    return board !== undefined && (board.maxMembers !== null || board.league !== null);
  };
  const roundOf = new Map<string, number>();
  const rounds: number[][] = [];
  requests.forEach((request, index) => {
    const keys = request.events.flatMap((e) => [
      `key\n${e.posted.board}\n${e.posted.idempotencyKey}`,
      `member\n${e.posted.board}\n${e.posted.member}`,
      ...(arrivalOrdered(e.posted.board) ? [`board\n${e.posted.board}`] : []),
    ]);
    let round = 0;
    for (const key of keys) round = Math.max(round, (roundOf.get(key) ?? -1) + 1);
    for (const key of keys) roundOf.set(key, round);
    (rounds[round] ??= []).push(index);
  });
  return rounds;
}

/**
 * One call for the requests of a round. If the call fails before its commit for a reason
 * of the events themselves (a board missing, text Postgres cannot store), each request is
 * applied alone, so only the request at fault fails; an outage, a timeout, a lock timeout or
 * a deadlock throws (the job is retried), as does a failure after the commit (the retry finds
 * the events applied and projects them).
 */
async function applyRound(ctx: AppContext, requests: readonly QueuedRequest[], jobId?: string): Promise<Settled[]> {
  let applied: AppliedRequests;
  try {
    applied = await applyRequests(ctx, requests);
  } catch (err) {
    // An outage or a busy database (Contention is Unavailable) is no fault of one request:
    // applying them one at a time would only multiply the load.
    if (ctx.failureOf(err) instanceof Unavailable) throw err;
    if (requests.length === 1) return [{ error: err }];
    ctx.log.warn(
      { jobId, requests: requests.length, err: (err as Error).message },
      'requests failed together; applying each alone',
    );
    const alone: Settled[] = [];
    for (const request of requests) alone.push(...(await applyRound(ctx, [request], jobId)));
    return alone;
  }
  return (await publishRequests(ctx, applied, jobId)).map((results) => ({ results }));
}

/**
 * Step 1: the requests' events as one batch in one laurel_apply_batch call. Throws before
 * anything is committed, or commits all of it.
 */
async function applyRequests(ctx: AppContext, requests: readonly QueuedRequest[]): Promise<AppliedRequests> {
  const firstOrd: number[] = [];
  const events: QueuedEvent[] = [];
  for (const request of requests) {
    firstOrd.push(events.length);
    events.push(...request.events);
  }
  const boardIds = events.map((e) => e.posted.board);
  const wanting = (ord: number) => requests[requestOfOrd(firstOrd, ord)]!.wantResults;

  for (let attempt = 0; attempt < STALE_RETRIES; attempt += 1) {
    const boards = await ctx.boards.getMany(boardIds, { fresh: attempt > 0 });
    const routed = events.map((event, ord) => routeEvent(event, ord, boards.get(event.posted.board)));
    const revisions = [...boards.values()].map((b) => ({ id: b.id, revision: b.revision }));
    const missing = boardIds.filter((id) => !boards.has(id));
    if (missing.length > 0) throw new Error(`boards not found: ${[...new Set(missing)].join(', ')}`);

    const asking = routed.filter((e) => wanting(e.ord));
    const before = asking.length > 0 ? await placementsBefore(ctx, asking, boards) : new Map<string, Placed>();
    // Text Postgres cannot store throws InvalidInput: the job then fails for good (src/jobs/job-errors.ts).
    const appliedAt = ctx.clock.now();
    const outcome = await applyBatch(ctx.db, routed, revisions, appliedAt);
    if (outcome.stale) continue;
    return { requests, firstOrd, routed, boards, outcome, before, appliedAt };
  }
  throw new Error('board definitions kept changing while the batch was applied');
}

/**
 * Step 2: the projection of what step 1 committed (one Redis round trip for all the
 * requests), then each request's own results, in request order (undefined where not asked for).
 */
async function publishRequests(
  ctx: AppContext,
  applied: AppliedRequests,
  jobId?: string,
): Promise<Array<EventResult[] | undefined>> {
  const { requests, firstOrd, routed, boards, outcome, before, appliedAt } = applied;
  // Duplicates count where their first copy was stored, possibly on a board this batch does not name.
  const named = new Set(outcome.aggregates.map((a) => a.board));
  if ([...named].some((id) => !boards.has(id))) {
    for (const [id, board] of await ctx.boards.getMany(named)) boards.set(id, board);
  }

  await ctx.faults.afterCommit?.(jobId);
  const pendingKeys = routed.map((e) => ({ board: e.boardId, key: e.key }));
  // Event-to-visible lag for the rollups: the projection is sent now and visible once this
  // round trip returns, so the lag ends now; it rides in the same round trip.
  const visibleAt = ctx.clock.now().getTime();
  const lags = outcome.results
    .filter((r) => r.outcome === 'applied')
    .map((r) => {
      const e = routed[r.ord]!;
      return { board: e.boardId, period: e.periodKey, ms: visibleAt - e.receivedAt.getTime() };
    });
  const incomplete = await ctx.leaderboard.project(outcome.aggregates, boards, {
    createdPeriods: outcome.createdPeriods,
    extraWrites: [
      clearPendingCommand(ctx.leaderboard, pendingKeys),
      ...ctx.leaderboard.lagCommands(startOfHour(appliedAt), lags),
    ],
  });
  // Redis lost (part of) these periods: reads already fall back to Postgres; refill them.
  requestScopeRebuilds(ctx, incomplete, 'projection');
  recordOutcomes(ctx, outcome.results, routed);
  ctx.log.debug(
    { jobId, requests: requests.length, events: routed.length, aggregates: outcome.aggregates.length },
    'batch applied',
  );

  const results: Array<EventResult[] | undefined> = requests.map((r) => (r.wantResults ? [] : undefined));
  const asked = outcome.results
    .filter((o) => requests[requestOfOrd(firstOrd, o.ord)]!.wantResults)
    .sort((a, b) => a.ord - b.ord);
  if (asked.length === 0) return results;
  const described = await describeOutcomes(ctx, asked, boards, before);
  asked.forEach((o, i) => results[requestOfOrd(firstOrd, o.ord)]!.push(described[i]!));
  return results;
}

/** The request whose range of ords holds `ord` (ranges are in order: a binary search). */
function requestOfOrd(firstOrd: readonly number[], ord: number): number {
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

function routeEvent(event: QueuedEvent, ord: number, board: Board | undefined): RoutedEvent {
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
