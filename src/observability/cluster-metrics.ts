import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * Metrics when the web side runs as several processes (WEB_PROCESSES > 1, node:cluster):
 * whichever process answers GET /metrics asks the primary, which gathers every process's
 * registry (prom-client's AggregatorRegistry: counters and histograms summed, per-metric
 * aggregators otherwise) and answers with the whole. A single process answers for itself.
 */
const ASK = 'laurel:metrics?';
const ANSWER = 'laurel:metrics!';
const TIMEOUT_MS = 5000;

interface Message {
  type?: string;
  id?: string;
  text?: string;
  error?: string;
}

/** In a cluster worker: makes this process's registry the one the primary aggregates. */
export function joinClusterMetrics(registry: Registry): void {
  if (!cluster.isWorker) return;
  // Constructing one installs prom-client's listener that answers the primary's requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

export async function metricsText(registry: Registry): Promise<string> {
  if (!cluster.isWorker || !process.send) return registry.metrics();
  const id = randomUUID();
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the cluster primary did not answer for metrics'));
    }, TIMEOUT_MS);
    const onMessage = (message: Message) => {
      if (message?.type !== ANSWER || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.text ?? '');
    };
    process.on('message', onMessage);
    process.send!({ type: ASK, id });
  });
}

/** In the primary: answers the workers' requests with the aggregate of all of them. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Message) => {
    if (message?.type !== ASK) return;
    // The asking process may have died meanwhile: a send on its closed channel would be an
    // unhandled error in the primary and take every web process down with it.
    const answer = (reply: Message) => {
      if (worker.isConnected()) worker.send(reply, () => undefined);
    };
    aggregator.clusterMetrics().then(
      (text) => answer({ type: ANSWER, id: message.id, text }),
      (err: Error) => answer({ type: ANSWER, id: message.id, error: err.message }),
    );
  });
}
