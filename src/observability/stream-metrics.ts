import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Metrics of the realtime streams (docs/design/realtime.md) of one web process. */
export interface StreamMetrics {
  open: Gauge<'kind'>;
  messages: Counter<'event'>;
  pushLag: Histogram<string>;
  subscriptions: Gauge<string>;
}

const byRegistry = new WeakMap<Registry, StreamMetrics>();

/** Registered once per registry: one process may build its web app more than once (tests). */
export function streamMetrics(registry: Registry): StreamMetrics {
  let metrics = byRegistry.get(registry);
  if (!metrics) {
    metrics = {
      open: new Gauge({
        name: 'laurel_streams_open',
        help: 'Open event streams, by kind (member, top)',
        labelNames: ['kind'],
        registers: [registry],
      }),
      messages: new Counter({
        name: 'laurel_stream_messages_total',
        help: 'Messages sent on event streams, by event (standing, top, closed, unavailable)',
        labelNames: ['event'],
        registers: [registry],
      }),
      pushLag: new Histogram({
        name: 'laurel_stream_push_lag_seconds',
        help: 'Time from a change becoming visible (projected) to a stream message carrying it being written',
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10],
        registers: [registry],
      }),
      subscriptions: new Gauge({
        name: 'laurel_stream_subscriptions',
        help: 'Change-notice channels (one per watched board and period) this process subscribes to',
        registers: [registry],
      }),
    };
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
