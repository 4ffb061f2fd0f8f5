import { Queue, type BulkJobOptions, type FlowProducer, type Job, type JobsOptions } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import type { JobData, JobName, QueueName } from './job-contracts.js';

/**
 * A queue typed by its contract (job-contracts.ts): it takes only its own job names, each
 * with its own payload, so a job no handler can parse does not compile. `R` is what its
 * jobs return.
 */
export type ContractQueue<Q extends QueueName, R = unknown> = Queue<JobData<Q, JobName<Q>>, R, JobName<Q>> & {
  readonly name: Q;
};

/** Queue keys live under one hash tag per queue, so each queue maps to one cluster slot. */
export function queuePrefix(redisPrefix: string, queue: string): string {
  return `{${redisPrefix}:${queue}}`;
}

/** A queue of the contract under its hash-tagged prefix (one cluster slot per queue), with its jobs' default options. */
export function createContractQueue<Q extends QueueName, R = unknown>(
  name: Q,
  connection: RedisClient,
  redisPrefix: string,
  defaultJobOptions: JobsOptions,
): ContractQueue<Q, R> {
  return new Queue(name, {
    connection,
    prefix: queuePrefix(redisPrefix, name),
    defaultJobOptions,
  }) as unknown as ContractQueue<Q, R>;
}

/** One job of queue Q: a name of its contract and that name's payload. */
export type ContractJob<Q extends QueueName, O = JobsOptions> = {
  [N in JobName<Q>]: { name: N; data: JobData<Q, N>; opts?: O };
}[JobName<Q>];

/** Queues one job; the contract types `name` and `data`. */
export function enqueue<Q extends QueueName, N extends JobName<Q>, R>(
  queue: ContractQueue<Q, R>,
  name: N,
  data: JobData<Q, N>,
  opts?: JobsOptions,
): Promise<Job<JobData<Q, N>, R, N>> {
  // The signature is the check; BullMQ's own generics cannot follow N through a generic Q.
  return untyped<R>(queue).add(name, data, opts) as Promise<Job<JobData<Q, N>, R, N>>;
}

/** Queues several jobs in one round trip (BullMQ adds them atomically). */
export async function enqueueBulk<Q extends QueueName, R>(
  queue: ContractQueue<Q, R>,
  jobs: ReadonlyArray<ContractJob<Q, BulkJobOptions>>,
): Promise<void> {
  await untyped<R>(queue).addBulk([...jobs]);
}

/** The queue as BullMQ types any queue, for the calls whose types the contract already checked. */
const untyped = <R>(queue: object) => queue as Queue<unknown, R, string>;

/**
 * Queues a parent job and its children, all on `queue`: BullMQ runs the parent once every
 * child has finished, and the parent reads their results.
 */
export async function enqueueFlow<Q extends QueueName>(
  flow: FlowProducer,
  queue: ContractQueue<Q>,
  parent: ContractJob<Q>,
  children: ReadonlyArray<ContractJob<Q>>,
): Promise<void> {
  const node = (job: ContractJob<Q>) => ({ ...job, queueName: queue.name, prefix: queue.opts.prefix });
  await flow.add({ ...node(parent), children: children.map(node) });
}
