import { Router } from 'express';
import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { storedFunctionDrift } from '../../storage/postgres/function-installer.js';
import { pendingMigrations } from '../../storage/postgres/migrator.js';
import { pingAll } from '../../storage/redis/connections.js';

async function check(name: string, probe: () => Promise<unknown>): Promise<{ name: string; ok: boolean; error?: string }> {
  try {
    await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 2 s')), 2000))]);
    return { name, ok: true };
  } catch (err) {
    return { name, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

export function healthRoutes(ctx: AppContext): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks = await Promise.all([
      check('postgres', () => sql`SELECT 1`.execute(ctx.db)),
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
    const failing = checks.filter((c) => !c.ok);
    res.status(failing.length ? 503 : 200).json({
      status: failing.length ? 'unavailable' : 'ready',
      ...(failing.length ? { failing: failing.map((c) => c.name) } : {}),
      checks: Object.fromEntries(checks.map((c) => [c.name, c.ok ? 'ok' : c.error])),
    });
  });
  return router;
}
