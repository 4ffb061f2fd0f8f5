import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../logger.js';
import { serveClusterMetrics } from '../observability/cluster-metrics.js';

const RESTART_DELAY_MS = 1000;
/**
 * The primary's own cap on a shutdown comes after the web processes' (SHUTDOWN_DELAY_MS, then
 * SHUTDOWN_TIMEOUT_MS, then they exit 1 themselves): this margin lets them finish exiting, so
 * the cap only ends processes that hang past their own.
 */
const SHUTDOWN_MARGIN_MS = 5000;

/**
 * WEB_PROCESSES > 1: the primary forks that many web processes sharing the port (node:cluster
 * hands out connections) and does nothing else. One Node process serves HTTP on one core;
 * the web side has no shared in-process state beyond short-TTL caches (boards, periods, API
 * keys), which already tolerate several replicas. A process that dies is replaced; SIGTERM
 * or SIGINT is passed on, and the primary exits once every process has shut down in order.
 */
export function runWebCluster(processes: number, log: Logger, shutdownMs: { delay: number; timeout: number }): void {
  let stopping = false;
  serveClusterMetrics();
  // Counted here rather than read from cluster.workers, which Node empties only once both
  // 'exit' and 'disconnect' have fired.
  let alive = 0;
  const fork = () => {
    if (stopping) return;
    alive += 1;
    cluster.fork().on('error', (err: Error) => log.warn({ err: err.message }, 'web process channel error'));
  };
  cluster.on('exit', (worker: Worker, code, signal) => {
    alive -= 1;
    if (stopping) {
      if (alive === 0) process.exit(0);
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, 'web process died; starting another');
    setTimeout(fork, RESTART_DELAY_MS);
  });
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, processes }, 'shutting down web processes');
    setTimeout(
      () => {
        log.error('web processes took too long to shut down; exiting');
        process.exit(1);
      },
      shutdownMs.delay + shutdownMs.timeout + SHUTDOWN_MARGIN_MS,
    ).unref();
    if (alive === 0) process.exit(0);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  for (let i = 0; i < processes; i += 1) fork();
  log.info({ processes }, 'web cluster started');
}
