import type { z } from 'zod';
import { periodsJobPayload, PERIODS_QUEUE } from './periods-queue.js';
import { erasureJobSchema, memberJobSchema, REBUILD_QUEUE, requestJobSchema, scopeJobSchema } from './rebuild-queue.js';
import { SCORE_EVENTS_QUEUE, scoreJobSchema } from './score-events-queue.js';
import { WEBHOOKS_QUEUE, webhookJobSchema } from './webhooks-queue.js';

/**
 * Every job Laurel queues: per queue, its job names and the payload schema of each. The
 * workers hold exactly one handler per name (checked at start-up); a job whose name is not
 * here, or whose payload does not parse, fails at once and is never retried.
 */
export const JOB_CONTRACTS = {
  [SCORE_EVENTS_QUEUE]: { apply: scoreJobSchema },
  [REBUILD_QUEUE]: {
    request: requestJobSchema,
    scope: scopeJobSchema,
    member: memberJobSchema,
    erase: erasureJobSchema,
  },
  [PERIODS_QUEUE]: { tick: periodsJobPayload, rollup: periodsJobPayload },
  [WEBHOOKS_QUEUE]: { 'period.closed': webhookJobSchema, 'member.period_report': webhookJobSchema },
} as const satisfies Record<string, Record<string, z.ZodType>>;

export type JobContracts = typeof JOB_CONTRACTS;
export type QueueName = keyof JobContracts;
export type JobName<Q extends QueueName> = keyof JobContracts[Q] & string;
export type JobData<Q extends QueueName, N extends JobName<Q>> =
  JobContracts[Q][N] extends z.ZodType<infer T> ? T : never;
