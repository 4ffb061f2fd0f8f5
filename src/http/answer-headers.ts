import type { RequestHandler, Response } from 'express';
import cors from 'cors';
import { API_HEADERS } from './security-headers.js';

/** Who may read answers from a browser (CORS_ORIGINS): any origin (`*`, only with PUBLIC_READS), or a list. */
export type CorsOrigins = '*' | readonly string[];

const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for browsers on an allowed origin, and preflights answered 204 before any key is
 * looked for (browsers send none with them). No cookies are ever used, so credentials are
 * never allowed. A request without `Origin`, or from an origin not listed, gets no CORS
 * header at all; a listed origin is echoed with `Vary: Origin`.
 */
function corsFor(origins: CorsOrigins): RequestHandler {
  return cors({
    origin: (origin, allow) => allow(null, !origin ? false : origins === '*' ? '*' : origins.includes(origin)),
    methods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
    exposedHeaders: ['Location', 'Retry-After', 'X-Request-Id'],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
}

/**
 * What every answer starts with: the security headers (one constant block) and `no-store`
 * unless the route says its answer may be reused (`setReadHeaders`), then CORS. With a list
 * of origins, every answer varies by Origin (a cache must not hand a browser an answer made
 * for another origin, or for a client that sent none), and every answer by Accept-Encoding. A preflight is answered here, before
 * any key is looked for (browsers send none with it): 204, with CORS headers only for an
 * allowed origin.
 */
export function answerStart(origins: CorsOrigins): RequestHandler {
  const allowCors = corsFor(origins);
  const listed = origins !== '*' && origins.length > 0;
  return (req, res, next) => {
    for (const [name, value] of API_HEADERS) res.setHeader(name, value);
    res.setHeader('Cache-Control', CACHE_CONTROL.none);
    if (listed) res.vary('Origin');
    // Any answer may be compressed, so every answer varies by Accept-Encoding; said here
    // rather than by compression alone, which event streams and what they refuse bypass.
    res.vary('Accept-Encoding');
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    // Without Origin there is nothing for CORS to answer (most clients are game servers).
    if (req.headers.origin === undefined && !preflight) return next();
    // cors answers a preflight of an allowed origin itself; a refused one goes on to here.
    allowCors(req, res, preflight ? () => void res.status(204).end() : next);
  };
}

/**
 * How long an answer may be reused: `live` for current standings and definitions (a few
 * seconds, so a busy board is not re-read by every refresh), `final` for what can no longer
 * change (closed periods), `none` for everything else (admin, ingest, errors).
 */
export type CachePolicy = 'live' | 'final' | 'none';

const CACHE_CONTROL: Record<CachePolicy, string> = {
  live: 'max-age=5',
  final: 'max-age=86400',
  none: 'no-store',
};

/**
 * Headers of a successful read (a JSON answer or an event stream): its cache lifetime,
 * `Vary: Authorization` (an admin key may see more than an anonymous caller), and, when
 * browsers of other origins may read, a resource policy that lets them.
 */
export function setReadHeaders(res: Response, policy: CachePolicy, origins: CorsOrigins): void {
  res.setHeader('Cache-Control', CACHE_CONTROL[policy]);
  res.vary('Authorization');
  if (origins === '*' || origins.length > 0) res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}
