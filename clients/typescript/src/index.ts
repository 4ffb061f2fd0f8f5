import createClient from 'openapi-fetch';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { operations } from './operations.js';
import type { components, paths } from './schema.js';
import type { Init, Ok } from './types.js';

export type { components, paths } from './schema.js';
export { WebhookVerificationError };

export type ApiError = components['schemas']['Error'];

/** Any answer of Laurel that is not a success: the API's error shape, with its HTTP status. */
export class LaurelError extends Error {
  readonly error: string;
  readonly details: ApiError['details'];
  constructor(
    readonly status: number,
    body: ApiError,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${status} ${body.error}: ${body.message}`);
    this.name = 'LaurelError';
    this.error = body.error;
    this.details = body.details;
  }
}

export interface LaurelClientOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; leave out for public reads. */
  apiKey?: string;
  /** Attempts of POST /v1/events on 503, 429 and timeouts (default 5). */
  eventAttempts?: number;
  /** Time one request may take before it is abandoned (and, for events, retried); default 10 s. Not for event streams. */
  timeoutMs?: number;
  /** First pause between event attempts, doubled each time (default 200 ms). */
  retryDelayMs?: number;
  fetch?: typeof globalThis.fetch;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function asError(status: number, body: unknown, response?: Response): LaurelError {
  const shaped =
    typeof body === 'object' && body !== null && 'error' in body && 'message' in body
      ? (body as ApiError)
      : { error: 'http_error', message: typeof body === 'string' && body ? body : `HTTP ${status}` };
  const retryAfter = Number(response?.headers.get('retry-after'));
  return new LaurelError(status, shaped, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
}

/** Unwraps an openapi-fetch answer: the data of a success, a LaurelError otherwise. */
async function send<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw asError(response.status, error, response);
  return data as T;
}

const retryable = (err: unknown) =>
  err instanceof LaurelError
    ? err.status === 503 || err.status === 429
    : err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError' || err instanceof TypeError);

type PostEventsInit = Init<'/v1/events', 'post'>;

/**
 * A typed client of every Laurel route (methods named by operationId). POST /v1/events is
 * retried on 503, 429 and timeouts with the very same body: its idempotency keys make a
 * repeat harmless, so a batch whose answer was lost is never counted twice.
 */
export function createLaurelClient(options: LaurelClientOptions) {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const baseFetch = options.fetch ?? globalThis.fetch;
  const http = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    // An event stream stays open as long as the caller reads it (cancel its body to end it).
    fetch: (request: Request) =>
      new URL(request.url).pathname.endsWith('/stream')
        ? baseFetch(request)
        : baseFetch(request, { signal: AbortSignal.timeout(timeoutMs) }),
  });
  const ops = operations(http, send);

  async function postEvents(init: PostEventsInit): Promise<Ok<paths['/v1/events']['post']>> {
    const attempts = options.eventAttempts ?? 5;
    let delay = options.retryDelayMs ?? 200;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await ops.postEvents(init);
      } catch (err) {
        if (attempt >= attempts || !retryable(err)) throw err;
        const hinted = err instanceof LaurelError && err.retryAfterSeconds ? err.retryAfterSeconds * 1000 : 0;
        await sleep(Math.max(delay, hinted));
        delay *= 2;
      }
    }
  }

  return { ...ops, postEvents, http };
}

export type LaurelClient = ReturnType<typeof createLaurelClient>;

/** What Laurel posts to WEBHOOK_URL. */
export interface WebhookPayload {
  id: string;
  type: 'period.closed' | 'member.period_report';
  createdAt: string;
  data: Record<string, unknown>;
}

/**
 * Verifies a Standard Webhooks delivery from Laurel: the `webhook-signature` over
 * `webhook-id.webhook-timestamp.body` with WEBHOOK_SECRET, and a timestamp within 5 minutes
 * of now (older or newer deliveries are refused as replays). Pass the raw body, exactly as
 * received. Throws WebhookVerificationError; deduplicate accepted deliveries on `id`.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
): WebhookPayload {
  const pick = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  const wanted = {
    'webhook-id': pick('webhook-id'),
    'webhook-timestamp': pick('webhook-timestamp'),
    'webhook-signature': pick('webhook-signature'),
  };
  return new Webhook(secret, { format: 'raw' }).verify(rawBody, wanted) as WebhookPayload;
}
