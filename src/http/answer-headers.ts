import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Header rules of every answer, as plain functions over node's request and response, so
 * that the Express middleware and any handler outside Express send the very same headers.
 */

export interface CorsPolicy {
  /** Origins allowed to read answers from a browser; `*` only with PUBLIC_READS. */
  origins: '*' | readonly string[];
}

const ALLOWED_METHODS = 'GET, HEAD, PUT, POST, DELETE';
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Request-Id';
const EXPOSED_HEADERS = 'Location, Retry-After, X-Request-Id';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

function allowedOrigin(req: IncomingMessage, policy: CorsPolicy): string | undefined {
  const origin = req.headers.origin;
  if (!origin) return undefined;
  if (policy.origins === '*') return '*';
  return policy.origins.includes(origin) ? origin : undefined;
}

function addVary(res: ServerResponse, field: string): void {
  const current = String(res.getHeader('Vary') ?? '');
  const fields = current ? current.split(/\s*,\s*/) : [];
  if (!fields.some((f) => f.toLowerCase() === field.toLowerCase())) res.setHeader('Vary', [...fields, field].join(', '));
}

/**
 * CORS headers for an answer to a browser on an allowed origin (no cookies are ever used,
 * so credentials are never allowed). A listed origin is echoed, and `Vary: Origin` keeps
 * caches from serving one origin's answer to another.
 */
export function setCorsHeaders(req: IncomingMessage, res: ServerResponse, policy: CorsPolicy): void {
  if (policy.origins !== '*' && policy.origins.length > 0) addVary(res, 'Origin');
  const origin = allowedOrigin(req, policy);
  if (!origin) return;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
}

/**
 * Answers a CORS preflight (OPTIONS with Access-Control-Request-Method) with 204. Returns
 * false for any other request. Preflights carry no key, so this runs before authentication.
 */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, policy: CorsPolicy): boolean {
  if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return false;
  setCorsHeaders(req, res, policy);
  if (allowedOrigin(req, policy)) {
    res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
  }
  res.statusCode = 204;
  res.end();
  return true;
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

export function setCacheControl(res: ServerResponse, policy: CachePolicy): void {
  res.setHeader('Cache-Control', CACHE_CONTROL[policy]);
}

/**
 * Headers of a successful read: its cache lifetime, `Vary: Authorization` (an admin key may
 * see more than an anonymous caller), and, when browsers of other origins may read, a
 * resource policy that lets them.
 */
export function setReadHeaders(res: ServerResponse, policy: CachePolicy, cors: CorsPolicy): void {
  setCacheControl(res, policy);
  addVary(res, 'Authorization');
  if (cors.origins === '*' || cors.origins.length > 0) res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}

/**
 * What every answer but the probes starts with: CORS, a preflight answered at once (before
 * any key is looked for: browsers send none with it), and `no-store` unless the route says
 * its answer may be reused. True when the preflight was the answer.
 */
export function startAnswer(req: IncomingMessage, res: ServerResponse, cors: CorsPolicy): boolean {
  setCorsHeaders(req, res, cors);
  if (answerPreflight(req, res, cors)) return true;
  setCacheControl(res, 'none');
  return false;
}
