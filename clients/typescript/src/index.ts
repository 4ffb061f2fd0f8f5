import createClient from 'openapi-fetch';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { operations } from './operations.js';
import type { components, paths } from './schema.js';
import type { Init, Ok } from './types.js';

export type { components, paths } from './schema.js';
export { WebhookVerificationError };

export type ApiError = components['schemas']['Error'];
/** The answer of POST /v1/events without waiting: the batch is queued. */
export type EventsAccepted = components['schemas']['Accepted'];
/** The answer of POST /v1/events?wait=true once the batch is applied: one result per event. */
export type EventResults = components['schemas']['EventResults'];

/**
 * The codes the client gives a request that got no HTTP answer (status 0): the connection
 * failed (refused, DNS, reset), the client's timeout ran out, or the caller aborted it.
 */
export type TransportErrorCode = 'network_error' | 'timeout' | 'aborted';

/**
 * Any failed request: an answer of Laurel that is not a success (the API's error shape, with
 * its HTTP status), or a request that got no answer at all (status 0, a TransportErrorCode,
 * the underlying error as `cause`).
 */
export class LaurelError extends Error {
  /** The error code: the API's (`not_found`, `validation_failed`, ...) or a TransportErrorCode. */
  readonly code: string;
  /** The same as `code`, as the API names it. */
  readonly error: string;
  readonly details: ApiError['details'];
  constructor(
    /** The HTTP status; 0 when no answer came. */
    readonly status: number,
    body: ApiError,
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(`${status === 0 ? '' : `${status} `}${body.error}: ${body.message}`, options);
    this.name = 'LaurelError';
    this.code = body.error;
    this.error = body.error;
    this.details = body.details;
  }
}

/** Where a player token comes from: the token itself, or a function asked before each request (to renew it). */
export type PlayerTokenSource = string | (() => string | Promise<string>);

export interface LaurelClientOptions {
  baseUrl: string;
  /**
   * A Laurel API key, sent as `Authorization: Bearer <key>`: for game servers and tools,
   * never for game clients (keys are secrets). Leave out for public reads.
   */
  apiKey?: string;
  /**
   * A player token instead of a key, sent the same way: for game clients, which read the
   * boards and only their own member's routes. A game server mints it (`createPlayerToken`).
   */
  playerToken?: PlayerTokenSource;
  /** Attempts of POST /v1/events on 503, 429, timeouts and network errors (default 5). */
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

/** What went wrong below HTTP, told from what fetch throws (undici's `fetch failed` carries the socket error as its cause). */
function transportError(err: unknown, url: string): LaurelError {
  if (err instanceof LaurelError) return err;
  const name = err instanceof Error ? err.name : '';
  const code: TransportErrorCode =
    name === 'TimeoutError' ? 'timeout' : name === 'AbortError' ? 'aborted' : 'network_error';
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  const why = [err instanceof Error ? err.message : String(err), cause?.code ?? cause?.message]
    .filter(Boolean)
    .join(': ');
  return new LaurelError(0, { error: code, message: `${url}: ${why}` }, undefined, { cause: err });
}

/** A failure of the transport that can surface after the answer's headers too, while its body is read. */
const fromTransport = (err: unknown) =>
  err instanceof Error &&
  (err.name === 'TimeoutError' || err.name === 'AbortError' || (err instanceof TypeError && err.cause !== undefined));

/** Unwraps an openapi-fetch answer: the data of a success, a LaurelError otherwise. */
async function send<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  let answer: Awaited<typeof call>;
  try {
    answer = await call;
  } catch (err) {
    throw fromTransport(err) ? transportError(err, 'reading the answer') : err;
  }
  const { data, error, response } = answer;
  if (!response.ok) throw asError(response.status, error, response);
  return data as T;
}

const retryable = (err: unknown) =>
  err instanceof LaurelError &&
  (err.status === 503 || err.status === 429 || err.code === 'timeout' || err.code === 'network_error');

type PostEventsInit = Init<'/v1/events', 'post'>;
type PostEventsAnswer = Ok<paths['/v1/events']['post']>;
/** POST /v1/events?wait=true: the body and options, the client sets `wait`. */
export type PostEventsAndWaitInit = Omit<PostEventsInit, 'params'> & {
  params?: Omit<NonNullable<PostEventsInit['params']>, 'query'>;
};

/** The request's own signal (the caller's abort) and the client's timeout, whichever fires first. */
function withTimeout(signal: AbortSignal, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  // AbortSignal.any arrived in Node 20.3; before it, the timeout alone.
  return typeof AbortSignal.any === 'function' ? AbortSignal.any([signal, timeout]) : timeout;
}

/**
 * A typed client of every Laurel route (methods named by operationId). POST /v1/events is
 * retried on 503, 429, timeouts and network errors with the very same body: its idempotency
 * keys make a repeat harmless, so a batch whose answer was lost is never counted twice.
 */
export function createLaurelClient(options: LaurelClientOptions) {
  if (options.apiKey !== undefined && options.playerToken !== undefined)
    throw new TypeError('createLaurelClient: give an apiKey or a playerToken, not both');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const baseFetch = options.fetch ?? globalThis.fetch;
  const token = options.apiKey ?? options.playerToken;
  const http = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    fetch: async (request: Request) => {
      // A header given to one call wins over the client's credentials.
      if (token && !request.headers.has('authorization'))
        request.headers.set('authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
      // An event stream stays open as long as the caller reads it (cancel its body to end it).
      const streaming = new URL(request.url).pathname.endsWith('/stream');
      try {
        return await baseFetch(request, streaming ? {} : { signal: withTimeout(request.signal, timeoutMs) });
      } catch (err) {
        throw transportError(err, `${request.method} ${request.url}`);
      }
    },
  });
  const ops = operations(http, send);

  /**
   * POST /v1/events. Without `wait` (or with `wait: 'false'`) the answer is `202 { accepted }`;
   * with `wait: 'true'` it is the results, or `202 { accepted, pending }` past Laurel's wait
   * (postEventsAndWait tells the two apart for you).
   */
  function postEvents(init: PostEventsInit & { params: { query: { wait: 'true' } } }): Promise<PostEventsAnswer>;
  function postEvents(init: PostEventsInit & { params?: { query?: { wait?: 'false' } } }): Promise<EventsAccepted>;
  function postEvents(init: PostEventsInit): Promise<PostEventsAnswer>;
  async function postEvents(init: PostEventsInit): Promise<PostEventsAnswer> {
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

  /**
   * POST /v1/events?wait=true, retried as postEvents is: the results once the batch is
   * applied. When Laurel could not apply it within its wait (5 s) the batch stays queued and
   * will be applied; this throws a LaurelError `pending` (status 202) rather than return
   * without results: ask `getEvent` for each key later.
   */
  async function postEventsAndWait(init: PostEventsAndWaitInit): Promise<EventResults> {
    const answer = await postEvents({ ...init, params: { ...init.params, query: { wait: 'true' } } });
    if ('results' in answer) return answer;
    throw new LaurelError(202, {
      error: 'pending',
      message: `the batch was not applied within the wait and stays queued (job ${answer.jobId ?? '?'})`,
    });
  }

  return { ...ops, postEvents, postEventsAndWait, http };
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
