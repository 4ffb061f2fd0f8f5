import type { ErrorRequestHandler } from 'express';
import {
  Conflict,
  InvalidInput,
  LaurelError,
  NotConfigured,
  NotFound,
  Unavailable,
  type ErrorDetail,
} from '../domain/errors.js';
import { echoed } from '../domain/validation.js';
import type { Logger } from '../logger.js';
import type { RepeatLimitedLog } from '../observability/repeat-limited-log.js';

/** Refusals only the HTTP edge makes (authentication, roles, body limits, rate limits). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/** Status and error code of each domain error. */
function statusOf(err: LaurelError): { status: number; code: string } {
  if (err instanceof InvalidInput) return { status: 400, code: err.code };
  if (err instanceof NotFound) return { status: 404, code: 'not_found' };
  if (err instanceof Conflict) return { status: 409, code: err.code };
  if (err instanceof Unavailable) return { status: 503, code: 'unavailable' };
  if (err instanceof NotConfigured) return { status: 503, code: 'not_configured' };
  return { status: 500, code: 'internal' };
}

/** Problems listed in one answer; a batch of junk would otherwise answer megabytes of them. */
export const MAX_DETAILS = 100;

/** What an error answers: status, the error body of docs/api.md and any headers of its own. */
interface ErrorAnswer {
  status: number;
  body: { error: string; message: string; details?: ErrorDetail[] };
  headers: Record<string, string>;
}

/**
 * Turns whatever a handler threw into the error shape of docs/api.md: Laurel's domain errors, the
 * edge's own HttpErrors, Express' body-parser refusals, and (through `translate`, which
 * knows the storage drivers) outages and text Postgres cannot store. An outage refuses every
 * request while it lasts, so it is logged through `failures`: one line per dependency per
 * interval, with a count.
 */
function errorAnswer(
  err: unknown,
  path: string,
  log: Logger,
  failures: RepeatLimitedLog,
  translate: (err: unknown) => LaurelError | undefined,
): ErrorAnswer {
  const headers: Record<string, string> = {};
  const answer = (status: number, code: string, message: string, details?: ErrorDetail[]): ErrorAnswer => {
    if (!details) return { status, body: { error: code, message }, headers };
    const rest = details.length - MAX_DETAILS;
    const told =
      rest > 0 ? `${message} (the first ${MAX_DETAILS} problems are listed; ${rest} more not shown)` : message;
    return { status, body: { error: code, message: told, details: details.slice(0, MAX_DETAILS) }, headers };
  };

  if (err instanceof HttpError) {
    Object.assign(headers, err.headers);
    return answer(err.status, err.code, err.message, err.details);
  }
  const known = translate(err);
  if (known instanceof Unavailable) {
    failures.warn(known.dependency, known.message, 'dependency unavailable', { path });
    headers['Retry-After'] = String(known.retryAfterSeconds);
    // A dependency down mid-request says only that; a service's own message says what was saved.
    const message =
      known.cause === undefined
        ? known.message
        : 'a dependency (Postgres or Redis) is unavailable; nothing was accepted, retry later';
    return answer(503, 'unavailable', message);
  }
  if (known) {
    const { status, code } = statusOf(known);
    return answer(status, code, known.message, known.details);
  }
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: unknown }).limit;
    const mb = typeof limit === 'number' ? ` ${Math.round((limit / 1024 / 1024) * 100) / 100} MB` : ' the limit';
    return answer(413, 'payload_too_large', `request body is larger than${mb}`);
  }
  if (type === 'entity.parse.failed') return answer(400, 'invalid_json', 'request body is not valid JSON');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return answer(415, 'unsupported_media_type', 'request body must be UTF-8 JSON');
  }
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // zlib's own words ("incorrect header check") tell a client nothing it can act on.
    if (/^Z_/.test(String((err as { code?: unknown }).code))) {
      return answer(
        400,
        'bad_request',
        'request body could not be decompressed: send valid gzip or deflate data, or no Content-Encoding',
      );
    }
    // Malformed requests Express itself rejects (a badly encoded path, say): its message,
    // which may quote the request, cut short.
    return answer(400, 'bad_request', err instanceof Error ? echoed(err.message) : 'bad request');
  }
  log.error({ err, path }, 'unhandled error');
  return answer(500, 'internal', 'internal error');
}

/**
 * `errorAnswer` as Express' last handler. An error after the answer began (an event stream
 * whose subscription failed, say) cannot be answered any more: the response is cut off, so
 * the client sees a broken answer and retries rather than waiting on it.
 */
export function errorHandler(
  log: Logger,
  failures: RepeatLimitedLog,
  translate: (err: unknown) => LaurelError | undefined,
): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      log.warn(
        { err: err instanceof Error ? err.message : String(err), path: req.path },
        'answer failed after it began',
      );
      return void res.destroy();
    }
    const { status, body, headers } = errorAnswer(err, req.path, log, failures, translate);
    res.set(headers).status(status).json(body);
  };
}
