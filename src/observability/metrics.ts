import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Queue } from 'bullmq';

/**
 * Prometheus metrics of one process. Each process (web, worker, or both in one) has its
 * own registry, passed around in the context rather than imported as a global.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly visibleLag = new Histogram({
    name: 'laurel_event_visible_lag_seconds',
    help: 'Time from intake (received) to the event being visible in Redis (projected)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly intakeGroupRequests = new Histogram({
    name: 'laurel_intake_group_requests',
    help: 'Intake requests per queue job (group commit: concurrent requests of a web process share one job)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000],
    registers: [this.registry],
  });

  readonly clockSkew = new Gauge({
    name: 'laurel_clock_skew_seconds',
    help: "This process's host clock minus Postgres' clock, as last measured (Laurel corrects it)",
    registers: [this.registry],
  });

  readonly intakeShed = new Counter({
    name: 'laurel_intake_shed_total',
    help: 'Intake requests refused at once (503) because INTAKE_MAX_IN_FLIGHT requests were in flight',
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'laurel_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly events = new Counter({
    name: 'laurel_events_total',
    help: 'Events processed by the score workers, by outcome (applied, duplicate, rejected) and reason',
    labelNames: ['outcome', 'reason'] as const,
    registers: [this.registry],
  });

  readonly rebuildDuration = new Histogram({
    name: 'laurel_rebuild_scope_duration_seconds',
    help: 'Duration of one scope rebuild (one category of a period)',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly closeDuration = new Histogram({
    name: 'laurel_period_close_duration_seconds',
    help: 'Duration of closing one period (final standings, awards, reports)',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly jobs = new Counter({
    name: 'laurel_jobs_total',
    help: 'Jobs run by this process, by queue, job name and outcome (completed, retried, delayed while a dependency is down, failed, requeued after a failure)',
    labelNames: ['queue', 'name', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'laurel_job_duration_seconds',
    help: 'Time one job run took, by queue and job name, whatever its outcome',
    labelNames: ['queue', 'name'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  constructor(queues: () => Queue[]) {
    collectDefaultMetrics({ register: this.registry, prefix: 'laurel_' });
    new Gauge({
      name: 'laurel_queue_jobs',
      help: 'Jobs per queue and state (waiting, active, delayed, failed)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      // Every web process reads the same Redis state: a cluster's aggregate takes one, not the sum.
      aggregator: 'first',
      // Read at scrape time: queue depth is Redis state, not a counter of this process.
      async collect() {
        for (const queue of queues()) {
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
          this.set({ queue: queue.name, state: 'waiting' }, (counts.waiting ?? 0) + (counts.prioritized ?? 0));
          for (const state of ['active', 'delayed', 'failed'] as const)
            this.set({ queue: queue.name, state }, counts[state] ?? 0);
        }
      },
    });
  }
}
