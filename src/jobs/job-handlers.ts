import { processErasure } from './erasure-processor.js';
import { handler, type JobHandler } from './job-registry.js';
import { processMemberReprojection } from './member-reprojection.js';
import { runTick } from './period-tick.js';
import { processRebuildRequest, processScopeRebuild } from './rebuild-processor.js';
import { computeRollups } from './rollups-processor.js';
import { processCoalesced } from './score-coalescer.js';
import { deliverWebhook } from './webhook-processor.js';

/** The one handler of every job name (src/queue/job-contracts.ts lists the names). */
export const JOB_HANDLERS: readonly JobHandler[] = [
  handler('score-events', 'apply', (ctx, data, job, worker) => processCoalesced(ctx, worker, job, data)),
  handler('rebuild', 'request', (_ctx, _data, job) => processRebuildRequest(job)),
  handler('rebuild', 'scope', (ctx, data, job) => processScopeRebuild(ctx, data, (progress) => job.updateProgress(progress))),
  handler('rebuild', 'member', (ctx, data) => processMemberReprojection(ctx, data)),
  handler('rebuild', 'erase', (ctx, data, job) => processErasure(ctx, data, job)),
  handler('periods', 'tick', (ctx) => runTick(ctx)),
  handler('periods', 'rollup', (ctx) => computeRollups(ctx)),
  handler('webhooks', 'period.closed', (ctx, data) => deliverWebhook(ctx, data)),
  handler('webhooks', 'member.period_report', (ctx, data) => deliverWebhook(ctx, data)),
];
