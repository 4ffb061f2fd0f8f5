import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadEnvOrExit } from '../config/env.js';
import { faultHooksFromEnvironment } from '../config/fault-injection.js';
import { localTimeFromEnvironment } from '../config/warped-clock.js';
import { createContext, type AppContext } from '../context.js';
import { createProbeApp, createWebApp } from '../http/app.js';
import { closeGracefully, createHttpServer } from '../http/server.js';
import { laurelReadiness } from '../health/laurel-checks.js';
import { joinClusterMetrics } from '../observability/cluster-metrics.js';
import { startWorkers, type RunningWorkers } from '../jobs/start-workers.js';
import { registerSchedulers } from '../queue/periods-queue.js';
import { rebuildIfLeaderboardLost } from '../services/rebuild-service.js';
import { SharedClock } from '../services/shared-clock.js';
import { watchKeyLayout } from '../services/key-layout-watch.js';

const RETRY_EVERY_MS = 2000;

/**
 * Starts the web side, the workers, or both in one process (development), and shuts
 * them down in order on SIGTERM / SIGINT: readiness turns 503, the process keeps serving
 * for SHUTDOWN_DELAY_MS, then it stops accepting HTTP, lets in-flight requests and jobs
 * finish (bounded by SHUTDOWN_TIMEOUT_MS), and closes the pools.
 *
 * Nothing here waits for a dependency: the port opens at once, so probes can say what is
 * missing, and the start-up tasks that need Redis or Postgres are retried until they pass.
 */
export async function run(parts: { web: boolean; worker: boolean }): Promise<void> {
  const env = loadEnvOrExit();
  const local = localTimeFromEnvironment(process.env);
  const clock = new SharedClock(local);
  const ctx: AppContext = createContext(env, {
    clock,
    name: parts.web && parts.worker ? 'laurel' : parts.web ? 'laurel-web' : 'laurel-worker',
  });
  if (local.warped)
    ctx.log.warn({ speed: process.env.LAUREL_CLOCK_SPEED }, 'warped clock on (soak): time runs faster than real time');
  clock.start(ctx.db, ctx.log, env.CLOCK_SKEW_WARN_MS, (skewMs) => ctx.metrics.clockSkew.set(skewMs / 1000));
  Object.assign(ctx.faults, faultHooksFromEnvironment(process.env, ctx.log));
  let jobs: RunningWorkers | undefined;
  const layout = watchKeyLayout(ctx, {
    role: parts.worker ? 'worker' : 'web',
    everyMs: env.LAYOUT_CHECK_MS,
    quietMs: env.LAYOUT_QUIET_MS,
    jobs: () => jobs?.workers ?? [],
  });
  const readiness = laurelReadiness(ctx, parts.web ? 'web' : 'worker', () => layout.probe());

  // Closers are added as parts start; signals are handled from the first moment, so a
  // SIGTERM during start-up still shuts down in order instead of killing the process.
  const closers: Array<() => Promise<void>> = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    readiness.drain();
    ctx.log.info({ signal, delayMs: env.SHUTDOWN_DELAY_MS }, 'shutting down');
    await sleep(env.SHUTDOWN_DELAY_MS);
    const timer = setTimeout(() => {
      ctx.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, env.SHUTDOWN_TIMEOUT_MS);
    for (const close of closers)
      await close().catch((err: Error) => ctx.log.error({ err: err.message }, 'close failed'));
    clock.stop();
    layout.stop();
    await ctx.close();
    clearTimeout(timer);
    ctx.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  /** Runs a start-up task until it succeeds, logging failures through the repeat limit. */
  const untilDone = async (dependency: string, what: string, task: () => Promise<unknown>) => {
    while (!stopping) {
      try {
        await task();
        return;
      } catch (err) {
        ctx.failures.warn(dependency, err as Error, `${what} failed; retrying`);
        await sleep(RETRY_EVERY_MS);
      }
    }
  };

  if (parts.web) {
    joinClusterMetrics(ctx.metrics.registry);
    const web = createWebApp(ctx, readiness);
    const server: Server = createHttpServer(web.handler, env).listen(env.PORT, () =>
      ctx.log.info({ port: env.PORT }, 'http listening'),
    );
    closers.push(async () => {
      web.closeStreams();
      await closeGracefully(server);
      await web.close();
    });
  } else {
    // Worker-only processes have no web side: probes and metrics get a port of their own.
    const probes = createHttpServer(createProbeApp(ctx, readiness), env);
    probes.listen(env.METRICS_PORT, () => ctx.log.info({ port: env.METRICS_PORT }, 'probes listening'));
    // Last: the probes answer (draining) while the workers finish their jobs.
    closers.push(() => closeGracefully(probes));
  }
  if (parts.worker) {
    const workers = (jobs = startWorkers(ctx, { schedulers: false }));
    // After the web side has stopped taking requests; before the probes of a worker-only process.
    if (parts.web) closers.push(() => workers.close());
    else closers.unshift(() => workers.close());
    ctx.log.info({ concurrency: env.WORKER_CONCURRENCY }, 'workers started');
    void untilDone('queue-redis', 'registering job schedulers', () => registerSchedulers(ctx.periodsQueue));
    // After the first look at the key layout record: no rebuild into a layout this release does not know.
    void untilDone('leaderboard-redis', 'start-up rebuild check', async () => {
      await layout.firstLook;
      if (!layout.foreign()) await rebuildIfLeaderboardLost(ctx);
    });
  }
}
