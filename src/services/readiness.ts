import type { AppContext } from '../context.js';
import { pingPostgres } from '../storage/postgres/database.js';
import { storedFunctionDrift } from '../storage/postgres/function-installer.js';
import { pendingMigrations } from '../storage/postgres/migrator.js';
import { pingAll } from '../storage/redis/connections.js';

export interface Readiness {
  ready: boolean;
  /** Each check's name and `ok` or why it failed. */
  checks: Record<string, string>;
  failing: string[];
}

const CHECK_TIMEOUT_MS = 2000;

async function check(name: string, probe: () => Promise<unknown>): Promise<{ name: string; ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS))),
    ]);
    return { name, ok: true };
  } catch (err) {
    return { name, ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** Whether this process can serve: Postgres, both Redis roles, no pending migration, and the stored functions of this code (or a later, compatible release) installed. */
export async function readiness(ctx: AppContext): Promise<Readiness> {
  const checks = await Promise.all([
    check('postgres', () => pingPostgres(ctx.db)),
    check('redis', () => pingAll(ctx.queueRedis)),
    check('leaderboard-redis', () => pingAll(ctx.leaderboard.redis)),
    check('migrations', async () => {
      const pending = await pendingMigrations(ctx.db);
      if (pending.length > 0) throw new Error(`pending: ${pending.join(', ')}`);
    }),
    check('functions', async () => {
      // A superseded definition is a process of the previous release during a rolling deploy: still ready.
      const drift = (await storedFunctionDrift(ctx.db)).filter((d) => d.state !== 'superseded');
      if (drift.length > 0) throw new Error(`not installed: ${drift.map((d) => `${d.name} (${d.state})`).join(', ')}`);
    }),
  ]);
  const failing = checks.filter((c) => !c.ok).map((c) => c.name);
  return { ready: failing.length === 0, failing, checks: Object.fromEntries(checks.map((c) => [c.name, c.ok ? 'ok' : c.error!])) };
}
