import type { Server } from 'node:http';
import { loadEnvOrExit } from '../config/env.js';
import { faultHooksFromEnvironment } from '../config/fault-injection.js';
import { clockFromEnvironment } from '../config/warped-clock.js';
import { systemClock } from '../clock.js';
import { createContext, type AppContext } from '../context.js';
import { createWebApp } from '../http/app.js';
import { createHttpServer } from '../http/server.js';
import { joinClusterMetrics } from '../observability/cluster-metrics.js';
import { waitUntilReady } from '../storage/redis/connections.js';
import { startWorkers } from '../../workers/start-workers.js';
import { rebuildIfLeaderboardLost } from '../services/rebuild-service.js';

const SHUTDOWN_TIMEOUT_MS = 15_000;

/**
 * Starts the web side, the workers, or both in one process (development), and shuts
 * them down in order on SIGTERM / SIGINT: stop accepting HTTP, let in-flight requests
 * and jobs finish (bounded), then close the pools.
 */
export async function run(parts: { web: boolean; worker: boolean }): Promise<void> {
  const env = loadEnvOrExit();
  const clock = clockFromEnvironment(process.env);
  const ctx: AppContext = createContext(env, { clock, name: parts.web && parts.worker ? 'laurel' : parts.web ? 'laurel-web' : 'laurel-worker' });
  if (clock !== systemClock) ctx.log.warn({ speed: process.env.LAUREL_CLOCK_SPEED }, 'warped clock on (soak): time runs faster than real time');
  Object.assign(ctx.faults, faultHooksFromEnvironment(process.env, ctx.log));
  await waitUntilReady(ctx.queueRedis, 30_000).catch((err: Error) => ctx.log.warn({ err: err.message }, 'queue Redis not ready yet'));

  // Closers are added as parts start; signals are handled from the first moment, so a
  // SIGTERM during start-up still shuts down in order instead of killing the process.
  const closers: Array<() => Promise<void>> = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      ctx.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    for (const close of closers) await close().catch((err: Error) => ctx.log.error({ err: err.message }, 'close failed'));
    await ctx.close();
    clearTimeout(timer);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (parts.worker) {
    const workers = startWorkers(ctx);
    closers.push(() => workers.close());
    ctx.log.info({ concurrency: env.WORKER_CONCURRENCY }, 'workers started');
    await waitUntilReady(ctx.leaderboard.redis, 30_000).catch((err: Error) => ctx.log.warn({ err: err.message }, 'leaderboard Redis not ready yet'));
    await rebuildIfLeaderboardLost(ctx).catch((err: Error) => ctx.log.error({ err: err.message }, 'start-up rebuild check failed'));
  }
  if (parts.worker && !parts.web) {
    // Worker-only processes have no web side: their metrics get a port of their own.
    const metrics = createHttpServer((req, res) => {
      if (req.url !== '/metrics') return void res.writeHead(404).end();
      ctx.metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': ctx.metrics.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    }, env).listen(env.METRICS_PORT);
    closers.push(() => new Promise<void>((resolve) => metrics.close(() => resolve())));
  }
  if (parts.web) {
    joinClusterMetrics(ctx.metrics.registry);
    const web = createWebApp(ctx);
    const server: Server = createHttpServer(web.app, env).listen(env.PORT, () => ctx.log.info({ port: env.PORT }, 'http listening'));
    closers.unshift(async () => {
      web.closeStreams();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await web.close();
    });
  }


}
