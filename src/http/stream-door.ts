import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { AppContext } from '../context.js';
import type { ApiKeyVerifier, Principal } from '../services/api-keys.js';
import type { StreamHub, StreamSpec } from '../services/realtime/stream-hub.js';
import { topStreamQuerySchema } from '../services/realtime/stream-query.js';
import { assertMember, resolveScope } from '../services/standings-service.js';
import { parseOrThrow } from '../domain/validation.js';
import { trackRequest } from './access-log.js';
import { startAnswer, type CorsPolicy } from './answer-headers.js';
import { admitRequest, checkRole } from './auth.js';
import { errorAnswer, HttpError } from './errors.js';
import { sendJson, type EtagOf } from './json-answer.js';
import { openEventStream } from './event-stream.js';
import { notAllowed } from './method-not-allowed.js';
import type { Budgets } from './rate-limit.js';
import { apiHeaders } from './security-headers.js';

/** The event-stream routes (SPEC §9.5), named as the router names its own. */
export const STREAM_ROUTES = ['GET /v1/boards/:boardId/standings/:memberId/stream', 'GET /v1/boards/:boardId/standings/stream'] as const;

const ALLOWED = ['GET', 'HEAD'];

// As Express matches its routes: any case, an optional trailing slash.
const MEMBER_STREAM = /^\/v1\/boards\/([^/]+)\/standings\/([^/]+)\/stream\/?$/i;
const TOP_STREAM = /^\/v1\/boards\/([^/]+)\/standings\/stream\/?$/i;

export interface Matched {
  route: string;
  boardId: string;
  /** Absent for the top stream. */
  memberId?: string;
}

/** The stream route a path names, if any (before the member route, which would take `stream` as a member id). */
export function matchStream(path: string): Matched | null {
  const member = MEMBER_STREAM.exec(path);
  if (member) return { route: STREAM_ROUTES[0].slice(4), boardId: member[1]!, memberId: member[2]! };
  const top = TOP_STREAM.exec(path);
  return top ? { route: STREAM_ROUTES[1].slice(4), boardId: top[1]! } : null;
}

function decodeParam(raw: string): string {
  try {
    return raw.includes('%') ? decodeURIComponent(raw) : raw;
  } catch {
    throw new HttpError(400, 'bad_request', `Failed to decode param '${raw}'`);
  }
}

export interface StreamDoorDeps {
  ctx: AppContext;
  verifier: ApiKeyVerifier;
  budgets: Budgets;
  hub: StreamHub;
  cors: CorsPolicy;
  /** The client address as TRUST_PROXY resolves it (what Express calls `req.ip`). */
  clientIp(req: IncomingMessage): string | undefined;
  /** Express' ETag generator, so that answers sent here are tagged as Express tags them. */
  etagOf: EtagOf;
}

/** SPEC §5's error answer for whatever was thrown, sent as Express' error handler sends it. */
export function answerError(deps: StreamDoorDeps, err: unknown, path: string, req: IncomingMessage, res: ServerResponse): void {
  const { ctx } = deps;
  const answer = errorAnswer(err, path, ctx.log, ctx.failures, ctx.failureOf);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  sendJson(req, res, answer.status, answer.body, deps.etagOf);
}

/**
 * The event streams on node's request and response, in front of Express (`door.ts` routes
 * them here). A stream lives as long as its client, so what a request carries through
 * Express (its own hidden classes for the request and response, the router's continuation,
 * compression's wrappers) would stay in memory for each of 10,000 streams: about half of
 * what a stream costs. The steps are Express' own, called as plain functions: security
 * headers, access log, CORS and preflight, admission (key, budget, role), the scope's
 * validation, and SPEC §5's error answers.
 */
export async function serveStream(deps: StreamDoorDeps, matched: Matched, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx, hub } = deps;
  let principal: Principal | undefined;
  apiHeaders(req, res, () => undefined);
  trackRequest(ctx.log, ctx.metrics, req, res, () => ({ route: matched.route, url: req.url!, keyName: principal?.name }));
  if (startAnswer(req, res, deps.cors)) return;
  try {
    // In Express' order: admission, then the method, then the role.
    principal = await admitRequest(deps.verifier, deps.budgets, { method: req.method!, path, headers: req.headers, ip: deps.clientIp(req) }, res);
    if (!ALLOWED.includes(req.method!)) throw notAllowed(path, req.method!, ALLOWED);
    checkRole(principal, 'read', path, { publicReads: ctx.env.PUBLIC_READS });
    const query = parseQuery(req.url!.slice(path.length + 1));
    const boardId = decodeParam(matched.boardId);
    let spec: StreamSpec;
    if (matched.memberId === undefined) {
      spec = { kind: 'top', limit: parseOrThrow(topStreamQuerySchema, query, 'query').limit };
    } else {
      const member = decodeParam(matched.memberId);
      assertMember(member);
      spec = { kind: 'member', member };
    }
    const scope = await resolveScope(ctx, boardId, query);
    let leave: (() => void) | null = null;
    const sink = openEventStream(req, res, () => leave?.());
    if (req.method === 'HEAD') return void res.end();
    leave = await hub.open(scope, spec, sink);
    if (res.destroyed) leave();
  } catch (err) {
    if (res.headersSent) {
      ctx.log.warn({ err: (err as Error).message, path }, 'event stream failed after it began');
      return void res.destroy();
    }
    answerError(deps, err, path, req, res);
  }
}
