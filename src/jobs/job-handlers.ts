import { reprojectMember } from '../services/member-projection.js';
import { runTick } from '../services/period-tick.js';
import { computeRollups } from '../services/rollups.js';
import { processScopeRebuild } from '../services/scope-rebuild.js';
import { deliverWebhook } from '../services/webhook-delivery.js';
import { processErasure } from './erasure-processor.js';
import { handler, type JobHandler } from './job-registry.js';
import { processRebuildRequest } from './rebuild-request.js';
import { processScoreJob } from '../services/score-application.js';

/** The one handler of every job name (src/queue/job-contracts.ts lists the names). */
export const JOB_HANDLERS: readonly JobHandler[] = [
  handler('score-events', 'apply', (ctx, data, job) => processScoreJob(ctx, data, job.id)),
  handler('rebuild', 'request', (_ctx, _data, job) => processRebuildRequest(job)),
  handler('rebuild', 'scope', (ctx, data, job) =>
    processScopeRebuild(ctx, data, (progress) => job.updateProgress(progress)),
  ),
  // Queued by a moderation change before it commits, so Redis catches up even if the process dies after the commit.
  handler('rebuild', 'member', (ctx, { member, openOnly }) => reprojectMember(ctx, member, openOnly)),
  handler('rebuild', 'erase', (ctx, data, job) => processErasure(ctx, data, job)),
  handler('periods', 'tick', (ctx) => runTick(ctx)),
  handler('periods', 'rollup', (ctx) => computeRollups(ctx)),
  handler('webhooks', 'period.closed', (ctx, data) => deliverWebhook(ctx, data)),
  handler('webhooks', 'member.period_report', (ctx, data) => deliverWebhook(ctx, data)),
];
