import type { Request, RequestHandler, Response } from 'express';
import { HttpError } from './errors.js';
import { roleAllows, type ApiKeyVerifier, type Principal, type Role } from '../services/api-keys.js';

/** Bull Board lives here; browsers log in to it with HTTP basic auth. */
export const BULL_BOARD_PATH = '/admin/queues';

export function principalOf(res: Response): Principal | undefined {
  return res.locals.principal as Principal | undefined;
}

/**
 * The key a request presents: `Authorization: Bearer <key>`, or, under Bull Board only, HTTP
 * basic auth with the key as password (browsers cannot send a bearer header there). Undefined when the
 * request has no Authorization header; null when it has one Laurel cannot read.
 */
function presentedKey(req: Request): string | undefined | null {
  const header = req.get('authorization');
  if (header === undefined) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1]!;
  // Basic only where browsers need it: elsewhere, credentials a browser resends on its own
  // would make an admin's Bull Board login an ambient credential for the whole API.
  const basic = req.originalUrl.startsWith(BULL_BOARD_PATH) ? /^Basic\s+(\S+)\s*$/i.exec(header) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : null;
  }
  return null;
}

/** A 401 with the challenge a client of that path understands (RFC 6750 / RFC 7617). */
export function unauthorized(req: Request, message: string): HttpError {
  const challenge = req.originalUrl.startsWith(BULL_BOARD_PATH)
    ? 'Basic realm="Laurel queues", charset="UTF-8"'
    : 'Bearer realm="laurel"';
  return new HttpError(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': challenge });
}

async function resolve(verifier: ApiKeyVerifier, req: Request, res: Response): Promise<HttpError | undefined> {
  res.locals.authenticated = true;
  const key = presentedKey(req);
  if (key === undefined) return undefined;
  if (key === null) return unauthorized(req, 'malformed Authorization header: expected Bearer <key>');
  const principal = await verifier.verify(key);
  if (!principal) return unauthorized(req, 'unknown or revoked API key');
  res.locals.principal = principal;
  return undefined;
}

/**
 * Runs for every request before its body is read: resolves the presented key to a
 * principal. A request without a key goes on anonymous (each route then says which role it
 * needs); one with a key that is unknown, revoked or malformed is marked, so that the rate
 * limit can count it against its IP before `rejectInvalidKeys` answers 401.
 */
export function authenticate(verifier: ApiKeyVerifier): RequestHandler {
  return async (req, res, next) => {
    res.locals.authFailure = await resolve(verifier, req, res);
    next();
  };
}

/** Answers 401 for a request whose key `authenticate` refused, whatever the route. */
export const rejectInvalidKeys: RequestHandler = (_req, res, next) => {
  const failure = res.locals.authFailure as HttpError | undefined;
  if (failure) throw failure;
  next();
};

/**
 * Requires a key with the given role (admin may do everything). With `publicReads`, read
 * routes need no key at all. Uses the principal `authenticate` resolved; a router mounted
 * without it resolves the key itself.
 */
export function requireRole(verifier: ApiKeyVerifier, required: Role, options: { publicReads?: boolean } = {}): RequestHandler {
  return async (req, res, next) => {
    if (!res.locals.authenticated) {
      const failure = await resolve(verifier, req, res);
      if (failure) throw failure;
    }
    const principal = principalOf(res);
    if (!principal) {
      if (required === 'read' && options.publicReads) return next();
      throw unauthorized(req, 'missing API key: send Authorization: Bearer <key>');
    }
    if (!roleAllows(principal.role, required)) {
      throw new HttpError(403, 'forbidden', `this route needs the ${required} role; the key "${principal.name}" has ${principal.role}`);
    }
    next();
  };
}
