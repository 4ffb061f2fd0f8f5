import { Webhook } from 'standardwebhooks';
import type { AppContext } from '../context.js';
import type { WebhookJob } from '../queue/webhooks-queue.js';
import { reportHeld } from '../storage/postgres/closing-repository.js';

const TIMEOUT_MS = 10_000;

/**
 * The Standard Webhooks headers of one delivery: `webhook-signature` is `v1,<base64>`, an
 * HMAC-SHA256 with WEBHOOK_SECRET (its bytes as written) over `id.timestamp.body`, so a
 * receiver can refuse replays outside its window (5 minutes in the standard's libraries).
 */
export function webhookHeaders(secret: string, deliveryId: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': deliveryId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret, { format: 'raw' }).sign(deliveryId, at, body),
  };
}

/**
 * Delivers one webhook. Anything but a 2xx answer throws, and BullMQ retries the job with
 * backoff: delivery is at least once, and the receiver deduplicates on `webhook-id`.
 * Redirects are not followed: a 3xx would re-post the signed body to wherever it points.
 */
export async function deliverWebhook(ctx: AppContext, job: WebhookJob): Promise<{ status: number }> {
  const url = ctx.env.WEBHOOK_URL;
  if (!url) return { status: 0 }; // webhooks were turned off since: nothing to deliver
  // A report whose member was erased meanwhile is not sent: the erasure removes the jobs it
  // can, but not one being delivered when it ran, whose retries end here.
  if (job.type === 'member.period_report') {
    const { board, period, member } = job.data as { board: string; period: string; member: string };
    if (!(await reportHeld(ctx.db, board, period, member))) return { status: 0 };
  }
  const body = JSON.stringify({ id: job.deliveryId, type: job.type, createdAt: job.createdAt, data: job.data });
  // Signed at each attempt: the timestamp says when this attempt was sent, as the standard wants.
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...webhookHeaders(ctx.env.WEBHOOK_SECRET ?? '', job.deliveryId, new Date(), body),
      'x-laurel-event': job.type,
    },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (res.status >= 300 && res.status < 400) {
    throw new Error(
      `webhook receiver answered ${res.status} (a redirect, not followed): point WEBHOOK_URL at the final address`,
    );
  }
  if (!res.ok) throw new Error(`webhook receiver answered ${res.status}`);
  return { status: res.status };
}
