import type { AppContext } from '../context.js';
import { pingPostgres } from '../storage/postgres/database.js';
import { storedFunctionDrift } from '../storage/postgres/function-installer.js';
import { pendingMigrations } from '../storage/postgres/migrator.js';
import { pingAll } from '../storage/redis/connections.js';
import { lastAnswerWhileUnreachable, onceConfirmed, Readiness, type ReadinessCheck } from './readiness.js';

/**
 * What each kind of process needs to be ready. A web process takes intake with the queue
 * Redis alone (events wait in the queue) and needs the schema its code expects; Postgres or
 * the leaderboard Redis down only degrades some reads. A worker can apply nothing without
 * all three, nor in a leaderboard key layout it does not know. Migrations are checked until current, then never again;
 * stored functions (which another release may replace) on each evaluation.
 */
export function laurelReadiness(
  ctx: AppContext,
  role: 'web' | 'worker',
  /** Fails while the leaderboard Redis is in a key layout this release does not know (key-layout-watch.ts). */
  keyLayout: () => Promise<void> = async () => undefined,
): Readiness {
  const worker = role === 'worker';
  const checks: ReadinessCheck[] = [
    // A web process still answers from Postgres; a worker cannot project, so it takes no job.
    { name: 'leaderboard-layout', required: worker, probe: keyLayout },
    { name: 'redis', required: true, probe: () => pingAll(ctx.queueRedis) },
    { name: 'leaderboard-redis', required: worker, probe: () => pingAll(ctx.leaderboard.redis) },
    { name: 'postgres', required: worker, probe: () => pingPostgres(ctx.db) },
    {
      name: 'migrations',
      required: true,
      probe: onceConfirmed(async () => {
        if ((await pendingMigrations(ctx.db)).length > 0) throw new Error('migrations pending');
      }),
    },
    {
      name: 'functions',
      required: true,
      probe: lastAnswerWhileUnreachable(async () => {
        // A superseded definition is a process of the previous release during a rolling deploy: still ready.
        const drift = (await storedFunctionDrift(ctx.db)).filter((d) => d.state !== 'superseded');
        return drift.length === 0;
      }, 'stored functions not current'),
    },
  ];
  const readiness = new Readiness();
  for (const check of checks) readiness.add(check);
  return readiness;
}
