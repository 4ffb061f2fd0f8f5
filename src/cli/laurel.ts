#!/usr/bin/env node
import { Command, Option } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { loadEnvOrExit } from '../config/env.js';
import { createContext, type AppContext } from '../context.js';
import { createLogger } from '../logger.js';
import { migrateDatabase } from '../storage/postgres/migrator.js';
import { waitUntilReady } from '../storage/redis/connections.js';
import { rebuildStatus, requestRebuild } from '../services/rebuild-service.js';
import { verifyLeaderboards } from '../services/verify-service.js';

async function withContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const env = loadEnvOrExit();
  const ctx = createContext(env, { log: createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr), name: 'laurel-cli' });
  try {
    await waitUntilReady(ctx.queueRedis);
    await waitUntilReady(ctx.leaderboard.redis);
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

const program = new Command()
  .name('laurel')
  .description('Operate a Laurel deployment (reads the same environment as the service).')
  .showHelpAfterError();

program
  .command('migrate')
  .description('apply database migrations up to the latest')
  .action(async () => {
    const applied = await migrateDatabase(loadEnvOrExit().DATABASE_URL);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  });

program
  .command('rebuild')
  .description('rebuild leaderboards from Postgres (all open periods by default) and show progress; workers do the work')
  .option('--board <id>', 'only this board')
  .option('--period <key>', 'only this period of the board (a key or "current")')
  .option('--from-events', 'recompute the aggregates from the event ledger first', false)
  .addOption(new Option('--no-wait', 'enqueue and exit without waiting'))
  .action(async (opts: { board?: string; period?: string; fromEvents: boolean; wait: boolean }) => {
    await withContext(async (ctx) => {
      const body = { ...(opts.board ? { board: opts.board } : {}), ...(opts.period ? { period: opts.period } : {}), fromEvents: opts.fromEvents };
      const { rebuildId, scopes } = await requestRebuild(ctx, body, 'cli');
      console.log(`rebuild ${rebuildId}: ${scopes} scope(s)`);
      if (!opts.wait) return;
      const bar = new SingleBar({ format: 'rebuilding [{bar}] {percentage}% | {value}/{total} scopes', hideCursor: true }, Presets.shades_classic);
      bar.start(Math.max(1, scopes), 0);
      for (;;) {
        const status = await rebuildStatus(ctx, rebuildId);
        bar.update(status.progress.done);
        if (status.state === 'completed' || status.state === 'failed' || status.progress.failed > 0) {
          bar.stop();
          const members = status.scopes.reduce((n, s) => n + s.members, 0);
          console.log(`${status.state}: ${status.progress.done} scope(s), ${members} ranked member(s), ${status.progress.failed} failed`);
          if (status.state !== 'completed') process.exitCode = 1;
          return;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    });
  });

program
  .command('verify')
  .description('compare every scope in Redis with Postgres; print each difference; exit 1 if any')
  .option('--board <id>', 'only this board')
  .option('--period <key>', 'only this period (default: every open period)')
  .action(async (opts: { board?: string; period?: string }) => {
    await withContext(async (ctx) => {
      const { scopes, differences } = await verifyLeaderboards(ctx, opts);
      for (const d of differences) console.log(`${d.board} ${d.period} ${d.category}/${d.region}: ${d.problem}`);
      console.log(differences.length ? `${differences.length} difference(s) in ${scopes} scope(s)` : `no difference in ${scopes} scope(s)`);
      if (differences.length) process.exitCode = 1;
    });
  });

await program.parseAsync(process.argv).catch((err: Error) => {
  console.error(`laurel: ${err.message}`);
  process.exitCode = 1;
});
