import type { Job } from 'bullmq';
import type { ScopeJobResult } from '../queue/rebuild-queue.js';

/** The parent of a rebuild flow runs once every scope is done: it sums them up. */
export async function processRebuildRequest(
  job: Job,
): Promise<{ scopes: number; members: number; durationMs: number }> {
  const values = Object.values(await job.getChildrenValues<ScopeJobResult>());
  return {
    scopes: values.length,
    members: values.reduce((n, v) => n + (v.members ?? 0), 0),
    durationMs: Date.now() - job.timestamp,
  };
}
