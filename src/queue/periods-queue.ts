import { Queue } from 'bullmq';
import { z } from 'zod';
import type { RedisClient } from '../storage/redis/connections.js';
import { createContractQueue, type ContractQueue } from './enqueue.js';

/**
 * The "periods" queue carries recurring work, driven by BullMQ job schedulers with stable
 * ids (upsertJobScheduler): re-registering at every worker start replaces, never doubles.
 */
export const PERIODS_QUEUE = 'periods';
export const PERIOD_TICK_SCHEDULER = 'period-tick';
export const ROLLUPS_SCHEDULER = 'rollups';
export const TICK_EVERY_MS = 30_000;
export const ROLLUPS_EVERY_MS = 5 * 60_000;

/** Scheduled jobs carry no payload: what a tick or a rollup does depends only on the clock and the database. */
export const periodsJobPayload = z.object({}).optional();

export type PeriodsQueue = ContractQueue<typeof PERIODS_QUEUE>;

export function createPeriodsQueue(connection: RedisClient, redisPrefix: string): PeriodsQueue {
  return createContractQueue(PERIODS_QUEUE, connection, redisPrefix, {
    attempts: 3,
    backoff: { type: 'capped-exponential' },
    removeOnComplete: { count: 100 },
    removeOnFail: { count: 1000 },
  });
}

export async function registerSchedulers(queue: PeriodsQueue): Promise<void> {
  // BullMQ types a scheduler's id as one of the queue's job names; here it is not one.
  const schedulers = queue as unknown as Queue;
  await schedulers.upsertJobScheduler(PERIOD_TICK_SCHEDULER, { every: TICK_EVERY_MS }, { name: 'tick' });
  await schedulers.upsertJobScheduler(ROLLUPS_SCHEDULER, { every: ROLLUPS_EVERY_MS }, { name: 'rollup' });
}
