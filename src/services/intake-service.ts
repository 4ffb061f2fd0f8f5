import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import { checkAgainstBoard, MAX_BATCH, payloadHash, scoreEventSchema, type ScoreEventInput } from '../domain/event.js';
import type { ScoreJob, ScoreJobResult } from '../queue/score-events-queue.js';
import { ScoreJobListener } from '../queue/queue-events.js';
import { enqueue } from '../queue/enqueue.js';
import { markPending, markRidesWithJobAdd } from '../storage/redis/pending-events.js';
import { InvalidInput, OutOfMemory, Unavailable, type ErrorDetail } from '../domain/errors.js';
import { zodDetails } from '../domain/validation.js';
import type { RedisClient } from '../storage/redis/connections.js';

/** What `?wait=true` listens with: one per web app, closed with it. */
export type ResultListener = Pick<ScoreJobListener, 'open' | 'close'>;

export function createResultListener(ctx: AppContext): ResultListener {
  return new ScoreJobListener(ctx.env, ctx.log);
}

export const WAIT_TIMEOUT_MS = 5000;
/** An enqueue slower than this is answered 503; a client retry is then deduplicated by key. */
const ENQUEUE_TIMEOUT_MS = 3000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
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

export type IntakeAnswer =
  | { status: 202; body: { accepted: number; jobId?: string; pending?: boolean } }
  | { status: 200; body: Required<ScoreJobResult> };

/** Splits the body into events: one event, or `{ events: [...] }` with 1 to 1000 of them. */
function eventsOf(body: unknown): { events: unknown[]; batch: boolean } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidInput('request body must be a JSON object: one event, or { "events": [...] }', [
      { path: '(root)', message: 'must be a JSON object' },
    ]);
  }
  if (!('events' in body)) return { events: [body], batch: false };
  const { events, ...rest } = body;
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    throw new InvalidInput('invalid batch', [{ path: extra[0]!, message: `unknown field(s): ${extra.join(', ')}` }]);
  }
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_BATCH) {
    throw new InvalidInput('invalid batch', [
      { path: 'events', message: `must be an array of 1 to ${MAX_BATCH} events` },
    ]);
  }
  return { events, batch: true };
}

/**
 * Intake: validates the whole batch (shape, then each event against its board), and only
 * if every event is valid enqueues it as one job. Nothing is enqueued otherwise, and a
 * queue Redis that is down fails the request (503) before anything is accepted.
 */
export async function acceptEvents(
  ctx: AppContext,
  body: unknown,
  options: { wait: boolean; listener?: ResultListener },
): Promise<IntakeAnswer> {
  const { events: raw, batch } = eventsOf(body);
  const details: ErrorDetail[] = [];
  const parsed: ScoreEventInput[] = [];
  raw.forEach((event, index) => {
    const result = scoreEventSchema.safeParse(event);
    if (result.success) parsed.push(result.data);
    else details.push(...zodDetails(result.error, batch ? index : undefined));
  });
  if (details.length > 0) throw new InvalidInput('invalid events; nothing was accepted', details);

  const now = ctx.clock.now();
  const boards = await ctx.boards.getMany(parsed.map((e) => e.board));
  parsed.forEach((event, index) => {
    for (const problem of checkAgainstBoard(event, boards.get(event.board), now)) {
      details.push(batch ? { index, ...problem } : problem);
    }
  });
  if (details.length > 0) throw new InvalidInput('invalid events; nothing was accepted', details);

  const receivedAt = now.toISOString();
  const data: ScoreJob = {
    events: parsed.map((posted) => ({ posted, receivedAt, payloadHash: payloadHash(posted) })),
    ...(options.wait ? { wantResults: true } : {}),
  };
  // Keys are marked pending before the job exists, so a fast worker can never clear the
  // mark before it is set; the mark names the job, so a mark left by a failed add is ignored.
  // On the queue's own connection the mark is run first without being waited for.
  const jobId = randomUUID();
  if (ctx.queueRedis.status !== 'ready')
    throw new Unavailable(
      `the queue is unavailable (Redis ${ctx.queueRedis.status}); nothing was accepted, retry later`,
      undefined,
      { dependency: 'queue-redis' },
    );
  // The job's data is most of what it costs the queue Redis.
  await ctx.queueMemory.assertRoom(JSON.stringify(data).length);
  const alongside = markRidesWithJobAdd(ctx.env, ctx.queueRedis);
  const marked = markPendingKeys(ctx, jobId, parsed, alongside ?? undefined);
  if (!alongside) await marked;
  const job = await withTimeout(enqueue(ctx.scoreQueue, 'apply', data, { jobId }), ENQUEUE_TIMEOUT_MS).catch(
    (err: Error) => {
      // Redis refuses a script outright over maxmemory (noeviction): nothing of the job was written.
      if (ctx.failureOf(err) instanceof OutOfMemory)
        throw ctx.queueMemory.full(
          'the event queue is full (queue Redis out of memory); nothing was accepted, retry later',
        );
      throw err;
    },
  );
  await marked;

  if (!options.wait || !options.listener) return { status: 202, body: { accepted: parsed.length } };
  // The 5 s wait covers opening the listener (the first ?wait=true of a process) too.
  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  try {
    const events = await withTimeout(options.listener.open(), Math.min(ENQUEUE_TIMEOUT_MS, WAIT_TIMEOUT_MS));
    const result: ScoreJobResult = await job.waitUntilFinished(events, Math.max(1, deadline - Date.now()));
    // A worker of the previous release (rolling deploy) leaves out the previous placement.
    const results = (result.results ?? []).map((r) => ({
      ...r,
      previousScore: r.previousScore ?? null,
      previousRank: r.previousRank ?? null,
    }));
    return { status: 200, body: { results } };
  } catch (err) {
    // Not applied within the wait: the batch is safely queued all the same.
    ctx.log.info({ jobId: job.id, err: (err as Error).message }, 'wait=true timed out; batch still queued');
    return { status: 202, body: { accepted: parsed.length, jobId: job.id, pending: true } };
  }
}

/**
 * Remembers which keys are queued so GET /v1/events/{key} can answer "pending". Best effort:
 * the leaderboard Redis may be volatile, and the answer falls back to the ledger once applied.
 */
async function markPendingKeys(
  ctx: AppContext,
  jobId: string,
  events: readonly ScoreEventInput[],
  connection?: RedisClient,
): Promise<void> {
  try {
    await markPending(
      ctx.leaderboard,
      jobId,
      events.map((e) => e.idempotencyKey),
      connection,
    );
  } catch (err) {
    ctx.log.warn({ jobId, err: (err as Error).message }, 'could not record pending keys');
  }
}
