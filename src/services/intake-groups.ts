import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import { MAX_BATCH } from '../domain/event.js';
import { OutOfMemory, Unavailable } from '../domain/errors.js';
import { enqueue } from '../queue/enqueue.js';
import { jobOf, type QueuedRequest, type ScoreJobHandle } from '../queue/score-events-queue.js';
import type { RedisClient } from '../storage/redis/connections.js';
import { markPending, markRidesWithJobAdd, type EventIdentity } from '../storage/redis/pending-events.js';

/** An add slower than this is answered 503; a client retry is then deduplicated by key. */
export const ENQUEUE_TIMEOUT_MS = 3000;

/** Where a request ended up: its group's job, and its own place among the job's requests. */
export interface Joined {
  job: ScoreJobHandle;
  request: number;
}

interface Group {
  requests: QueuedRequest[];
  events: number;
  timer?: NodeJS.Timeout;
  answers: Array<{ resolve: (joined: Joined) => void; reject: (err: unknown) => void }>;
}

/**
 * Group commit at the intake. Concurrent requests of a web process join one queue job: a
 * group is added when its window (INTAKE_GROUP_WINDOW_MS, from its first request) ends, or at
 * once when it holds 1000 events (a request that would take it past that starts the next
 * group). One add, one pending mark and one job life cycle then serve the whole group, and
 * the worker applies it in one call; each request keeps its place (arrival order) and its
 * own outcome (src/services/score-application.ts).
 *
 * A request is answered only once its group's job is in the queue Redis: `join` resolves
 * then, and rejects every request of the group alike when the add fails, so a 202 always
 * means queued and a 503 means nothing of the group was accepted. Requests are validated
 * before they join: a request's 400 never reaches a group.
 */
export class IntakeGroups {
  private forming: Group | undefined;
  private readonly adding = new Set<Promise<void>>();

  constructor(
    private readonly ctx: AppContext,
    private readonly windowMs: number = ctx.env.INTAKE_GROUP_WINDOW_MS,
    private readonly maxEvents: number = MAX_BATCH,
  ) {}

  join(request: QueuedRequest): Promise<Joined> {
    if (this.forming && this.forming.events + request.events.length > this.maxEvents) this.add();
    const group = (this.forming ??= { requests: [], events: 0, answers: [] });
    const joined = new Promise<Joined>((resolve, reject) => group.answers.push({ resolve, reject }));
    group.requests.push(request);
    group.events += request.events.length;
    this.ctx.faults.joinedGroup?.(group.requests.length - 1);
    if (group.events >= this.maxEvents || this.windowMs === 0) this.add();
    else group.timer ??= setTimeout(() => this.add(), this.windowMs);
    return joined;
  }

  /** Adds the group still forming and waits for every add in flight (shutdown: no request is left unanswered). */
  async close(): Promise<void> {
    this.add();
    await Promise.allSettled([...this.adding]);
  }

  private add(): void {
    const group = this.forming;
    if (!group) return;
    this.forming = undefined;
    clearTimeout(group.timer);
    const added = addGroup(this.ctx, group.requests).then(
      (job) => group.answers.forEach((answer, request) => answer.resolve({ job, request })),
      (err: unknown) => group.answers.forEach((answer) => answer.reject(err)),
    );
    this.adding.add(added);
    void added.finally(() => this.adding.delete(added));
  }
}

/**
 * One job for the group. Its keys are marked pending before the job exists, so a fast
 * worker can never clear a mark before it is set; the mark names the job, so a mark left by
 * a failed add is ignored. On the queue's own connection the mark is sent just ahead of the
 * add without being waited for (one connection's commands run in order).
 */
async function addGroup(ctx: AppContext, requests: readonly QueuedRequest[]): Promise<ScoreJobHandle> {
  await ctx.faults.beforeGroupAdd?.(requests.length);
  const data = jobOf(requests);
  const jobId = randomUUID();
  const alongside = markRidesWithJobAdd(ctx.env, ctx.queueRedis);
  const marked = markPendingKeys(
    ctx,
    jobId,
    data.events.map((e) => ({ board: e.posted.board, key: e.posted.idempotencyKey })),
    alongside ?? undefined,
  );
  if (!alongside) await marked;
  const adding = enqueue(ctx.scoreQueue, 'apply', data, { jobId });
  const job = await queueAnswerWithin(adding, ENQUEUE_TIMEOUT_MS).catch(async (err: Error) => {
    // Redis refuses a script outright over maxmemory (noeviction): nothing of the job was written.
    if (ctx.failureOf(err) instanceof OutOfMemory)
      throw ctx.queueMemory.full(
        'the event queue is full (queue Redis out of memory); nothing was accepted, retry later',
      );
    return (await outcomeOfAdd(ctx, adding, jobId)) ?? Promise.reject(err);
  });
  await marked;
  ctx.metrics.intakeGroupRequests.observe(requests.length);
  return job;
}

/** How long intake keeps finding out whether an add that did not answer in time landed after all. */
export const ADD_OUTCOME_WAIT_MS = 10_000;

/**
 * An add that timed out or lost its connection may still have landed: a frozen Redis runs
 * it when it resumes, a lost connection may have delivered it. Before answering 503
 * ("nothing was accepted") intake finds out: the add's own answer if it comes within
 * ADD_OUTCOME_WAIT_MS, else a lookup of the job by its id. The job if it landed; undefined
 * if it surely did not; a 503 saying the outcome is unknown when the queue stays silent (a
 * retry with the same keys is then deduplicated either way).
 */
async function outcomeOfAdd(
  ctx: AppContext,
  adding: Promise<ScoreJobHandle>,
  jobId: string,
): Promise<ScoreJobHandle | undefined> {
  const answered = await queueAnswerWithin(adding, ADD_OUTCOME_WAIT_MS).catch(() => undefined);
  if (answered) return answered;
  const found = await queueAnswerWithin(ctx.scoreQueue.getJob(jobId), ENQUEUE_TIMEOUT_MS).catch(() => null);
  if (found === null)
    throw new Unavailable(
      'the queue did not answer; whether the events were accepted is unknown: retry with the same idempotency keys (a retry is deduplicated)',
      undefined,
      { dependency: 'queue-redis' },
    );
  return found ?? undefined;
}

/** The promise, or a 503 (Unavailable of the queue Redis) once `ms` have passed without its answer. */
export function queueAnswerWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Unavailable(`the queue did not answer within ${ms} ms; nothing was accepted, retry later`, undefined, {
            dependency: 'queue-redis',
          }),
        ),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Remembers which keys are queued so GET /v1/events/{key} can answer "pending". Best effort:
 * the leaderboard Redis may be volatile, and the answer falls back to the ledger once applied.
 */
async function markPendingKeys(
  ctx: AppContext,
  jobId: string,
  events: readonly EventIdentity[],
  connection?: RedisClient,
): Promise<void> {
  try {
    await markPending(ctx.leaderboard, jobId, events, connection);
  } catch (err) {
    ctx.log.warn({ jobId, err: (err as Error).message }, 'could not record pending keys');
  }
}
