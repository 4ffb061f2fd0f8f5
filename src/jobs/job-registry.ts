import { DelayedError, UnrecoverableError, type Job, type Processor } from 'bullmq';
import type { z } from 'zod';
import type { AppContext } from '../context.js';
import { Unavailable } from '../domain/errors.js';
import { cappedExponentialBackoff } from './backoff.js';
import { asJobError } from './job-errors.js';
import { JOB_CONTRACTS, type JobData, type JobName, type QueueName } from '../queue/job-contracts.js';

/** The handler of one job name of one queue; `data` has passed the name's schema. */
export interface JobHandler<Q extends QueueName = QueueName, N extends JobName<Q> = JobName<Q>> {
  queue: Q;
  name: N;
  handle: (ctx: AppContext, data: JobData<Q, N>, job: Job) => Promise<unknown>;
}

/** Declares a handler, typed by its queue's contract. */
export function handler<Q extends QueueName, N extends JobName<Q>>(
  queue: Q,
  name: N,
  handle: (ctx: AppContext, data: JobData<Q, N>, job: Job) => Promise<unknown>,
): JobHandler {
  return { queue, name, handle } as unknown as JobHandler;
}

interface Entry {
  schema: z.ZodType;
  handle: (ctx: AppContext, data: unknown, job: Job) => Promise<unknown>;
}

export type JobRegistry = ReadonlyMap<string, ReadonlyMap<string, Entry>>;

/**
 * Pairs every job name of every queue with its one handler. Throws, listing every problem,
 * when a name has no handler or more than one, or a handler names a job no contract has:
 * the worker process then fails at start-up instead of failing jobs later.
 */
export function buildJobRegistry(
  handlers: readonly JobHandler[],
  contracts: Readonly<Record<string, Readonly<Record<string, z.ZodType>>>> = JOB_CONTRACTS,
): JobRegistry {
  const problems: string[] = [];
  const registry = new Map<string, Map<string, Entry>>();
  for (const [queue, jobs] of Object.entries(contracts)) {
    const entries = new Map<string, Entry>();
    for (const [name, schema] of Object.entries(jobs)) {
      const found = handlers.filter((h) => h.queue === queue && h.name === name);
      if (found.length !== 1) problems.push(`job "${name}" of queue "${queue}" has ${found.length} handlers, not 1`);
      else entries.set(name, { schema, handle: found[0]!.handle as Entry['handle'] });
    }
    registry.set(queue, entries);
  }
  for (const h of handlers) {
    if (!contracts[h.queue]?.[h.name])
      problems.push(`a handler names job "${h.name}" of queue "${h.queue}", which no contract declares`);
  }
  if (problems.length > 0) throw new Error(`job registry is inconsistent: ${[...new Set(problems)].join('; ')}`);
  return registry;
}

/**
 * The BullMQ processor of one queue: the job's name picks its handler, and its payload must
 * parse. An unknown name or an invalid payload will never succeed, however often it is
 * retried, so it fails at once (UnrecoverableError) and no other handler ever sees it.
 */
export function dispatcher(ctx: AppContext, queue: string, registry: JobRegistry): Processor {
  const entries = registry.get(queue);
  if (!entries) throw new Error(`no queue "${queue}" in the job registry`);
  return async (job: Job, token?: string) => {
    const entry = entries.get(job.name);
    if (!entry) throw new UnrecoverableError(`queue "${queue}" has no job "${job.name}"`);
    const parsed = entry.schema.safeParse(job.data);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new UnrecoverableError(`invalid payload for job "${job.name}" of queue "${queue}": ${issues.join('; ')}`);
    }
    try {
      return await entry.handle(ctx, parsed.data, job);
    } catch (err) {
      if (token && ctx.failureOf(err) instanceof Unavailable) await waitOutOutage(ctx, queue, job, token, err);
      throw asJobError(err);
    }
  };
}

/**
 * A job that failed because a dependency is down is put back, delayed, without spending an
 * attempt: however long Postgres or a Redis is away, no job fails for good for it (attempts
 * bound only the failures of the job itself). The delay grows with the runs the job has
 * started (capped at 30 s, jittered). When the queue Redis is the one down the move itself
 * fails: the job's lock then expires and a worker takes the job over once Redis is back.
 */
async function waitOutOutage(ctx: AppContext, queue: string, job: Job, token: string, err: unknown): Promise<never> {
  try {
    const delay = await cappedExponentialBackoff(job.attemptsStarted);
    await job.moveToDelayed(Date.now() + delay, token);
  } catch {
    throw err;
  }
  const outage = ctx.failureOf(err) as Unavailable;
  ctx.metrics.jobs.inc({ queue, name: job.name, outcome: 'delayed' });
  ctx.failures.warn(outage.dependency, outage, 'job put back until the dependency is back', {
    queue,
    jobId: job.id,
    name: job.name,
  });
  throw new DelayedError();
}
