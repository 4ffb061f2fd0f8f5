import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { HttpError } from './errors.js';
import type { Budgets } from './rate-limit.js';
import {
  roleAllows,
  type ApiKeyVerifier,
  type PlayerPrincipal,
  type Principal,
  type Role,
} from '../services/api-keys.js';
import { looksLikePlayerToken } from '../domain/player-token-shape.js';
import type { PlayerTokens } from '../services/player-tokens.js';
import { param } from './params.js';

/** Bull Board lives here; browsers log in to it with HTTP basic auth. */
export const BULL_BOARD_PATH = '/admin/queues';

/** What admission looks at. */
interface RequestFacts {
  method: string;
  /** The path as the client sent it, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** What the request costs of its budget (see requestWeight). */
  weight: number;
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
 * Longest player token read: Laurel's own are under 400 characters, and a studio's backend
 * may add claims of its own. Tokens are verified, never remembered.
 */
const MAX_TOKEN_LENGTH = 4096;

/**
 * The key a request presents: `Authorization: Bearer <key>`, or, under Bull Board only, HTTP
 * basic auth with the key as password (browsers cannot send a bearer header there). Undefined when the
 * request has no Authorization header; null when it has one Laurel cannot read.
 */
function presentedKey(headers: IncomingHttpHeaders, path: string): string | undefined | null {
  const header = headers.authorization;
  if (header === undefined) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) {
    const presented = bearer[1]!;
    const limit = looksLikePlayerToken(presented) ? MAX_TOKEN_LENGTH : MAX_KEY_LENGTH;
    return presented.length <= limit ? presented : null;
  }
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
async function admit(
  verifier: ApiKeyVerifier,
  tokens: PlayerTokens,
  budgets: Budgets,
  facts: RequestFacts,
): Promise<Principal | undefined> {
  const key = presentedKey(facts.headers, facts.path);
  if (key === undefined) {
    await budgets.ip(facts.ip(), facts.weight);
    return undefined;
  }
  if (key !== null && looksLikePlayerToken(key)) return admitPlayer(tokens, budgets, facts, key);
  let principal = key === null ? 'refused' : verifier.known(key);
  if (principal === undefined) {
    if (!verifier.remembers(key!)) await budgets.lookup(facts.ip());
    principal = (await verifier.verify(key!)) ?? 'refused';
  }
  if (principal === 'refused') {
    await budgets.ip(facts.ip(), facts.weight);
    throw unauthorized(
      facts.path,
      key === null ? 'malformed Authorization header: expected Bearer <key>' : 'unknown or revoked API key',
    );
  }
  await budgets.key(principal.id, facts.weight);
  return principal;
}

/**
 * A player token: verified in memory (no lookup, so no lookup budget), then the member's
 * budget is spent. A refused token spends the address's budget, like an unknown key.
 */
async function admitPlayer(
  tokens: PlayerTokens,
  budgets: Budgets,
  facts: RequestFacts,
  token: string,
): Promise<PlayerPrincipal> {
  const player = await tokens.verify(token);
  if (!player) {
    await budgets.ip(facts.ip(), facts.weight);
    throw unauthorized(
      facts.path,
      tokens.configured
        ? 'invalid player token: bad signature, another issuer or algorithm, or expired'
        : 'player tokens are not accepted here: PLAYER_TOKEN_SECRET is not set',
    );
  }
  await budgets.player(player.id, facts.weight);
  return player;
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

/** Who a refusal names: a key by its name, a player token as such (never its member). */
const whoIs = (principal: Principal) =>
  principal.role === 'player' ? 'a player token' : `the key "${principal.name}"`;

/**
 * The member a member route (`/v1/members/{id}...`) serves, as its handler reads it (the
 * parameter its pattern names first); null for a member route naming no one member;
 * undefined on every other route.
 */
function memberOfRoute(req: Request): string | null | undefined {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern !== 'string' || !/^\/v1\/members(\/|$)/.test(pattern)) return undefined;
  const name = /^\/v1\/members\/:(\w+)/.exec(pattern)?.[1];
  return name === undefined ? null : param(req, name);
}

/**
 * Whether a principal (undefined: no key) may call a route needing `required`; throws the
 * 401 or 403 otherwise. With `publicReads`, read routes need no key at all. A player token
 * reads what a read key reads, except other members' member routes: the one rule for
 * player tokens, so any read route, present or future, follows it.
 */
function checkRole(
  principal: Principal | undefined,
  required: Role,
  req: Request,
  options: { publicReads?: boolean } = {},
): void {
  if (!principal) {
    if (required === 'read' && options.publicReads) return;
    throw unauthorized(pathOf(req.originalUrl), 'missing API key: send Authorization: Bearer <key>');
  }
  if (principal.role === 'player' && required === 'read') {
    const member = memberOfRoute(req);
    if (member !== undefined && member !== principal.member)
      throw new HttpError(403, 'forbidden', "a player token reads only its own member's member routes");
    return;
  }
  if (!roleAllows(principal.role, required)) {
    throw new HttpError(
      403,
      'forbidden',
      `this route needs the ${required} role; ${whoIs(principal)} has ${principal.role}`,
    );
  }
}

/**
 * A read with `metadata=true` adds one Postgres statement over the metadata of every entry
 * (up to 200 of 64 KB documents) and costs 20 to 30 times a plain page, so it spends this
 * many requests of its budget: a read key cannot then load Postgres at a twentieth of its
 * budget's worth.
 */
export const METADATA_READ_WEIGHT = 20;

/** What a request spends of its budget: one, or METADATA_READ_WEIGHT for a read with metadata. */
function requestWeight(query: unknown): number {
  return (query as { metadata?: unknown }).metadata === 'true' ? METADATA_READ_WEIGHT : 1;
}

const factsOf = (req: Request): RequestFacts => ({
  method: req.method,
  path: pathOf(req.originalUrl),
  headers: req.headers,
  weight: requestWeight(req.query),
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
  tokens: PlayerTokens,
  budgets: Budgets,
  facts: RequestFacts,
  res: ServerResponse,
): Promise<Principal | undefined> {
  let principal: Principal | undefined;
  try {
    principal = await admit(verifier, tokens, budgets, facts);
    if (!principal && takesBody(facts.method))
      throw unauthorized(facts.path, 'missing API key: send Authorization: Bearer <key>');
    // No route that takes a body accepts the read, metrics or player role, and read keys and
    // player tokens ship inside game clients: such a write is refused here, before its body
    // is read, like a keyless one.
    if (principal && ONLY_READS.has(principal.role) && takesBody(facts.method)) {
      throw new HttpError(
        403,
        'forbidden',
        `${whoIs(principal)} has the ${principal.role} role, which only reads (GET)`,
      );
    }
  } catch (err) {
    if (declaresBody(facts.headers)) res.setHeader('Connection', 'close');
    throw err;
  }
  if (!takesBody(facts.method) && declaresBody(facts.headers)) res.setHeader('Connection', 'close');
  return principal;
}

/** Roles whose routes are all GETs. */
const ONLY_READS: ReadonlySet<Principal['role']> = new Set(['read', 'metrics', 'player']);

/** `admitRequest` for every Express request but the probes. */
export function authenticate(verifier: ApiKeyVerifier, tokens: PlayerTokens, budgets: Budgets): RequestHandler {
  return async (req, res, next) => {
    res.locals.principal = await admitRequest(verifier, tokens, budgets, factsOf(req), res);
    next();
  };
}

/**
 * Requires a key with the given role (admin may do everything), for the principal
 * `authenticate` resolved. With `publicReads`, read routes need no key at all.
 */
export function requireRole(required: Role, options: { publicReads?: boolean } = {}): RequestHandler {
  return (req, res, next) => {
    checkRole(principalOf(res), required, req, options);
    next();
  };
}
