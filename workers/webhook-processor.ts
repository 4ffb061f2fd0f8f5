import { createHmac } from 'node:crypto';
import type { AppContext } from '../src/context.js';
import type { WebhookJob } from '../src/queue/webhooks-queue.js';

const TIMEOUT_MS = 10_000;

/** The signature header value: HMAC-SHA256 of the exact body with WEBHOOK_SECRET. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Delivers one webhook. Anything but a 2xx answer throws, and BullMQ retries the job with
 * backoff: delivery is at least once, and the receiver deduplicates on X-Laurel-Delivery.
 */
export async function deliverWebhook(ctx: AppContext, job: WebhookJob): Promise<{ status: number }> {
  const url = ctx.env.WEBHOOK_URL;
  if (!url) return { status: 0 }; // webhooks were turned off since: nothing to deliver
  const body = JSON.stringify({ id: job.deliveryId, type: job.type, createdAt: job.createdAt, data: job.data });
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-laurel-delivery': job.deliveryId,
      'x-laurel-event': job.type,
      'x-laurel-signature': signature(ctx.env.WEBHOOK_SECRET ?? '', body),
    },
    body,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`webhook receiver answered ${res.status}`);
  return { status: res.status };
}
