import type { AppContext } from '../context.js';
import { checkAgainstBoard, MAX_BATCH, payloadHash, scoreEventSchema, type ScoreEventInput } from '../domain/event.js';
import { requestResults, type EventResult } from '../queue/score-events-queue.js';
import { ScoreJobListener } from '../queue/queue-events.js';
import { InvalidInput, Unavailable, type ErrorDetail } from '../domain/errors.js';
import { echoed, zodDetails } from '../domain/validation.js';
import { QueueLagGuard } from './intake-backpressure.js';
import { ENQUEUE_TIMEOUT_MS, IntakeGroups, queueAnswerWithin } from './intake-groups.js';

/**
 * What intake holds per web app, closed with it: the groups requests join (group commit)
 * and the listener `?wait=true` waits with.
 */
export interface Intake {
  groups: IntakeGroups;
  listener: Pick<ScoreJobListener, 'open' | 'close'>;
  /** Admits one more request in flight, or throws 503 at INTAKE_MAX_IN_FLIGHT; call the returned function when it is answered. */
  admit(): () => void;
  /** Shedding by queue lag (INTAKE_MAX_QUEUE_LAG_MS). */
  lag: QueueLagGuard;
  close(): Promise<void>;
}

/** Retry-After of a request shed for load: the requests in flight are answered within about that. */
const SHED_RETRY_AFTER_SECONDS = 1;

export function createIntake(ctx: AppContext): Intake {
  const groups = new IntakeGroups(ctx);
  const listener = new ScoreJobListener(ctx.env, ctx.log);
  const limit = ctx.env.INTAKE_MAX_IN_FLIGHT;
  let inFlight = 0;
  const lag = new QueueLagGuard(
    async () => (await ctx.scoreQueue.getJobs(['wait'], 0, 0, true))[0]?.timestamp,
    ctx.env.INTAKE_MAX_QUEUE_LAG_MS,
    ctx.log,
  );
  return {
    groups,
    listener,
    lag,
    // Load shedding: past the limit a request is refused at once, so an overloaded process
    // answers in milliseconds (503, retry later) instead of queueing every request for seconds.
    admit() {
      if (limit > 0 && inFlight >= limit) {
        ctx.metrics.intakeShed.inc();
        throw new Unavailable(
          `intake is at capacity (${limit} requests in flight); nothing was accepted, retry later`,
          undefined,
          { retryAfterSeconds: SHED_RETRY_AFTER_SECONDS },
        );
      }
      inFlight += 1;
      let released = false;
      return () => {
        if (!released) inFlight -= 1;
        released = true;
      };
    },
    async close() {
      // Groups first: a request still forming one is added and answered before the process goes.
      await groups.close();
      await listener.close();
    },
  };
}

export const WAIT_TIMEOUT_MS = 5000;

type CompleteResult = Omit<EventResult, 'idempotencyKey' | 'board'> &
  Required<Pick<EventResult, 'previousScore' | 'previousRank'>> & { idempotencyKey: string; board: string };

export type IntakeAnswer =
  | { status: 202; body: { accepted: number; jobId?: string; pending?: boolean } }
  | { status: 200; body: { results: CompleteResult[] } };

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
    throw new InvalidInput(
      'invalid batch',
      extra.map((name) => ({ path: echoed(name), message: 'unknown field' })),
    );
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
 * if every event is valid lets it join a group (src/services/intake-groups.ts), answered
 * once the group's job is queued. Nothing is queued otherwise, and a queue Redis that is down
 * fails the request (503) before anything is accepted.
 */
export async function acceptEvents(
  ctx: AppContext,
  intake: Intake,
  body: unknown,
  options: { wait: boolean },
): Promise<IntakeAnswer> {
  const release = intake.admit();
  try {
    return await acceptAdmitted(ctx, intake, body, options);
  } finally {
    release();
  }
}

async function acceptAdmitted(
  ctx: AppContext,
  intake: Intake,
  body: unknown,
  options: { wait: boolean },
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

  if (ctx.queueRedis.status !== 'ready')
    throw new Unavailable(
      `the queue is unavailable (Redis ${ctx.queueRedis.status}); nothing was accepted, retry later`,
      undefined,
      { dependency: 'queue-redis' },
    );
  const receivedAt = now.toISOString();
  const events = parsed.map((posted) => ({ posted, receivedAt, payloadHash: payloadHash(posted) }));
  // The events' share of their job is most of what it costs the queue Redis.
  await intake.lag.assertFresh();
  await ctx.queueMemory.assertRoom(JSON.stringify(events).length);
  const { job, request } = await intake.groups.join({ events, wantResults: options.wait });

  if (!options.wait) return { status: 202, body: { accepted: parsed.length } };
  // The 5 s wait covers opening the listener (the first ?wait=true of a process) too.
  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  try {
    const listening = await queueAnswerWithin(intake.listener.open(), Math.min(ENQUEUE_TIMEOUT_MS, WAIT_TIMEOUT_MS));
    const results = requestResults(await job.waitUntilFinished(listening, Math.max(1, deadline - Date.now())), request);
    if (!results) throw new Error("the job finished without this request's results");
    // Results are in the request's order and name no event (see EventResult): its own events
    // name them. A worker of release 0.2 (rolling deploy) leaves out the previous placement.
    return {
      status: 200,
      body: {
        results: results.map(({ idempotencyKey: _key, board: _board, ...r }, i) => ({
          idempotencyKey: events[i]!.posted.idempotencyKey,
          board: events[i]!.posted.board,
          ...r,
          previousScore: r.previousScore ?? null,
          previousRank: r.previousRank ?? null,
        })),
      },
    };
  } catch (err) {
    // Not applied within the wait: the batch is safely queued all the same.
    ctx.log.info({ jobId: job.id, err: (err as Error).message }, 'wait=true timed out; batch still queued');
    return { status: 202, body: { accepted: parsed.length, jobId: job.id, pending: true } };
  }
}
