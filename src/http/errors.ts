import type { ErrorRequestHandler } from 'express';
import type { ZodError } from 'zod';
import type { Logger } from '../logger.js';

export interface ErrorDetail {
  index?: number;
  path: string;
  message: string;
}

/** The one error type handlers throw; the error handler turns it into SPEC §5's error shape. */
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

export const validationFailed = (message: string, details: ErrorDetail[]) =>
  new HttpError(400, 'validation_failed', message, details);
export const notFound = (message: string) => new HttpError(404, 'not_found', message);
export const conflict = (message: string, details?: ErrorDetail[]) => new HttpError(409, 'conflict', message, details);

/** A dependency is down: the request is refused whole, and the client should retry. */
export class DependencyUnavailable extends Error {}

export function zodDetails(error: ZodError, index?: number, pathPrefix: readonly (string | number)[] = []): ErrorDetail[] {
  const at = (path: readonly PropertyKey[], message: string): ErrorDetail => {
    const joined = [...pathPrefix, ...path].map(String).join('.') || '(root)';
    return index === undefined ? { path: joined, message } : { index, path: joined, message };
  };
  // An unknown field is named by its own path, so a client sees which one to drop.
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' ? issue.keys.map((key) => at([...issue.path, key], 'unknown field')) : [at(issue.path, issue.message)],
  );
}

/** Parses with a zod schema or throws a 400 naming every field at fault. */
export function parseOrThrow<T>(
  schema: { safeParse(data: unknown): { success: true; data: T } | { success: false; error: ZodError } },
  data: unknown,
  what: string,
): T {
  const result = schema.safeParse(data);
  if (!result.success) throw validationFailed(`invalid ${what}`, zodDetails(result.error));
  return result.data;
}

const PG_CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300']);

/** True when the error means Postgres or Redis is unreachable rather than a bug. */
export function isDependencyDown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof DependencyUnavailable) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (PG_CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    /Stream isn't writeable|Connection is closed|connect ECONNREFUSED|timeout exceeded when trying to connect|Connection terminated|Redis not ready|Command timed out/i.test(
      err.message,
    )
  );
}

/** Problems listed in one answer; a batch of junk would otherwise answer megabytes of them. */
export const MAX_DETAILS = 100;

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    const body = (status: number, code: string, message: string, details?: ErrorDetail[]) => {
      if (!details) return res.status(status).json({ error: code, message });
      const rest = details.length - MAX_DETAILS;
      const told = rest > 0 ? `${message} (the first ${MAX_DETAILS} problems are listed; ${rest} more not shown)` : message;
      return res.status(status).json({ error: code, message: told, details: details.slice(0, MAX_DETAILS) });
    };

    if (err instanceof HttpError) {
      if (err.headers) res.set(err.headers);
      return body(err.status, err.code, err.message, err.details);
    }
    const type = (err as { type?: unknown }).type;
    if (type === 'entity.too.large') {
      const limit = (err as { limit?: unknown }).limit;
      const mb = typeof limit === 'number' ? ` ${Math.round((limit / 1024 / 1024) * 100) / 100} MB` : ' the limit';
      return body(413, 'payload_too_large', `request body is larger than${mb}`);
    }
    if (type === 'entity.parse.failed') return body(400, 'invalid_json', 'request body is not valid JSON');
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return body(415, 'unsupported_media_type', 'request body must be UTF-8 JSON');
    }
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Malformed requests Express itself rejects (a badly encoded path, say).
      return body(400, 'bad_request', err instanceof Error ? err.message : 'bad request');
    }
    const pgCode = (err as { code?: unknown }).code;
    if (pgCode === '22P05' || pgCode === '22021') {
      // Defence in depth: validation refuses such text before it reaches Postgres.
      return body(400, 'invalid_text', 'the request contains text Postgres cannot store (NUL or invalid UTF-8)');
    }
    if (isDependencyDown(err)) {
      log.warn({ err: (err as Error).message, path: req.path }, 'dependency unavailable');
      res.set('Retry-After', '1');
      return body(503, 'unavailable', 'a dependency (Postgres or Redis) is unavailable; nothing was accepted, retry later');
    }
    log.error({ err, path: req.path }, 'unhandled error');
    return body(500, 'internal', 'internal error');
  };
}
