import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { pendingMigrations } from '../storage/postgres/migrator.js';
import { pingAll } from '../storage/redis/connections.js';
import { onceConfirmed, Readiness, type ReadinessCheck } from './readiness.js';

/**
 * What each kind of process needs to be ready. A web process takes intake with the queue
 * Redis alone (events wait in the queue) and needs the schema its code expects; Postgres or
 * the leaderboard Redis down only degrades some reads. A worker can apply nothing without
 * all three.
 */
export function laurelReadiness(ctx: AppContext, role: 'web' | 'worker'): Readiness {
  const worker = role === 'worker';
  const checks: ReadinessCheck[] = [
    { name: 'queue-redis', required: true, probe: () => pingAll(ctx.queueRedis) },
    { name: 'leaderboard-redis', required: worker, probe: () => pingAll(ctx.leaderboard.redis) },
    { name: 'postgres', required: worker, probe: () => sql`SELECT 1`.execute(ctx.db) },
    {
      name: 'migrations',
      required: true,
      probe: onceConfirmed(async () => {
        if ((await pendingMigrations(ctx.db)).length > 0) throw new Error('migrations pending');
      }),
    },
  ];
  const readiness = new Readiness();
  for (const check of checks) readiness.add(check);
  return readiness;
}
