import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { HttpError } from './errors.js';
import type { Budgets } from './rate-limit.js';
import { roleAllows, type ApiKeyVerifier, type Principal, type Role } from '../services/api-keys.js';

/** Bull Board lives here; browsers log in to it with HTTP basic auth. */
export const BULL_BOARD_PATH = '/admin/queues';

/** What admission looks at. */
interface RequestFacts {
  method: string;
  /** The path as the client sent it, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The client address as TRUST_PROXY resolves it: asked only when an address budget is spent, which a request with a known key never does. */
  ip(): string | undefined;
}

export function principalOf(res: Response): Principal | undefined {
  return res.locals.principal as Principal | undefined;
}

const isBullBoard = (path: string) => path === BULL_BOARD_PATH || path.startsWith(`${BULL_BOARD_PATH}/`);

/**
 * Longest key read: Laurel's keys are 47 characters, ADMIN_API_KEY at most this many. A longer
 * one is refused unread, so the verifier's memory of presented keys stays small.
 */
const MAX_KEY_LENGTH = 512;

/**
 * The key a request presents: `Authorization: Bearer <key>`, or, under Bull Board only, HTTP
 * basic auth with the key as password (browsers cannot send a bearer header there). Undefined when the
 * request has no Authorization header; null when it has one Laurel cannot read.
 */
function presentedKey(headers: IncomingHttpHeaders, path: string): string | undefined | null {
  const header = headers.authorization;
  if (header === undefined) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1]!.length <= MAX_KEY_LENGTH ? bearer[1]! : null;
  // Basic only where browsers need it: elsewhere, credentials a browser resends on its own
  // would make an admin's Bull Board login an ambient credential for the whole API.
  const basic = isBullBoard(path) ? /^Basic\s+(\S+)\s*$/i.exec(header) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const key = colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : '';
    return key && key.length <= MAX_KEY_LENGTH ? key : null;
  }
  return null;
}

/** A 401 with the challenge a client of that path understands (RFC 6750 / RFC 7617). */
export function unauthorized(path: string, message: string): HttpError {
  const challenge = isBullBoard(path) ? 'Basic realm="Laurel queues", charset="UTF-8"' : 'Bearer realm="laurel"';
  return new HttpError(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': challenge });
}

/**
 * Resolves the presented key and spends the matching budget; throws the 401 or 429 the
 * request gets. Returns the principal, or undefined for a request without a key.
 *
 * The order bounds what a stranger costs: a key this process has not seen valid spends a
 * lookup budget of the client's address before Postgres is asked (a valid key's renewal
 * spends none, so an outage that fails renewals never turns them into 429s), and a key just found unknown is
 * refused from memory; every request without a valid key spends the address's budget.
 */
async function admit(verifier: ApiKeyVerifier, budgets: Budgets, facts: RequestFacts): Promise<Principal | undefined> {
  const key = presentedKey(facts.headers, facts.path);
  if (key === undefined) {
    await budgets.ip(facts.ip());
    return undefined;
  }
  let principal = key === null ? 'refused' : verifier.known(key);
  if (principal === undefined) {
    if (!verifier.remembers(key!)) await budgets.lookup(facts.ip());
    principal = (await verifier.verify(key!)) ?? 'refused';
  }
  if (principal === 'refused') {
    await budgets.ip(facts.ip());
    throw unauthorized(
      facts.path,
      key === null ? 'malformed Authorization header: expected Bearer <key>' : 'unknown or revoked API key',
    );
  }
  await budgets.key(principal.id);
  return principal;
}

const WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the request declares a body (a length above 0 or a chunked one). */
export function declaresBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Whether requests of this method have their body read. Every route that takes a body
 * (any method but GET, HEAD, OPTIONS) needs a key, and bodies are never read on the
 * others, so a stranger cannot make the server read or parse anything.
 */
export function takesBody(method: string): boolean {
  return !WITHOUT_BODY.has(method);
}

/**
 * Whether a principal (undefined: no key) may call a route needing `required`; throws the
 * 401 or 403 otherwise. With `publicReads`, read routes need no key at all.
 */
function checkRole(
  principal: Principal | undefined,
  required: Role,
  path: string,
  options: { publicReads?: boolean } = {},
): void {
  if (!principal) {
    if (required === 'read' && options.publicReads) return;
    throw unauthorized(path, 'missing API key: send Authorization: Bearer <key>');
  }
  if (!roleAllows(principal.role, required)) {
    throw new HttpError(
      403,
      'forbidden',
      `this route needs the ${required} role; the key "${principal.name}" has ${principal.role}`,
    );
  }
}

const factsOf = (req: Request): RequestFacts => ({
  method: req.method,
  path: pathOf(req.originalUrl),
  headers: req.headers,
  ip: () => req.ip,
});

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * Admission before the body is read: the key and budget, and a request to a route that takes a body refused without a
 * key or with a read key. Such a refusal, and any body this server will not read, closes the
 * connection after the answer, so the unread body is never waited for.
 */
async function admitRequest(
  verifier: ApiKeyVerifier,
  budgets: Budgets,
  facts: RequestFacts,
  res: ServerResponse,
): Promise<Principal | undefined> {
  let principal: Principal | undefined;
  try {
    principal = await admit(verifier, budgets, facts);
    if (!principal && takesBody(facts.method))
      throw unauthorized(facts.path, 'missing API key: send Authorization: Bearer <key>');
    // No route that takes a body accepts the read role, and read keys ship inside game
    // clients: such a write is refused here, before its body is read, like a keyless one.
    if (principal?.role === 'read' && takesBody(facts.method)) {
      throw new HttpError(403, 'forbidden', `the key "${principal.name}" has the read role, which only reads (GET)`);
    }
  } catch (err) {
    if (declaresBody(facts.headers)) res.setHeader('Connection', 'close');
    throw err;
  }
  if (!takesBody(facts.method) && declaresBody(facts.headers)) res.setHeader('Connection', 'close');
  return principal;
}

/** `admitRequest` for every Express request but the probes. */
export function authenticate(verifier: ApiKeyVerifier, budgets: Budgets): RequestHandler {
  return async (req, res, next) => {
    res.locals.principal = await admitRequest(verifier, budgets, factsOf(req), res);
    next();
  };
}

/**
 * Requires a key with the given role (admin may do everything), for the principal
 * `authenticate` resolved. With `publicReads`, read routes need no key at all.
 */
export function requireRole(required: Role, options: { publicReads?: boolean } = {}): RequestHandler {
  return (req, res, next) => {
    checkRole(principalOf(res), required, pathOf(req.originalUrl), options);
    next();
  };
}
