import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { principalOf } from './auth.js';

const UNLOGGED = new Set(['/healthz', '/readyz']);

/**
 * One access-log line and one latency observation per request, from a single `finish`
 * listener. Written by hand rather than with pino-http, which builds two or three child
 * loggers and serialises every header of every request (a tenth of the web process's CPU
 * under read load, see bench/results/PROFILE.md). The line keeps the same shape for what
 * matters (request id, method, url, status, response time, key name) and never carries
 * headers, so no Authorization value can reach the log, nor member ids (see loggedUrl); the
 * logger's redaction still applies.
 */
/** The pattern of the route Express matched (`req.route` is untyped), or 'unmatched'. */
function routePattern(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  return typeof pattern === 'string' ? `${req.baseUrl}${pattern}` : 'unmatched';
}

/** Query parameters that name members (`member=`, `members=`, and a member search's `q=`). */
const MEMBER_QUERY = /([?&](?:members?|q)=)[^&]*/g;

/**
 * The URL as the line shows it: member ids left out, as `:memberId` in the path and `:member`
 * in the query. A line is written when its answer is done, so `DELETE /v1/members/{id}` would
 * otherwise write the id of a member just erased, and logs are kept where an erasure cannot
 * reach. Boards, periods and keys stay readable.
 */
function loggedUrl(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
  const shownQuery = query.replace(MEMBER_QUERY, '$1:member');
  if (typeof pattern !== 'string' || !pattern.includes(':memberId')) {
    return req.originalUrl.slice(0, req.originalUrl.length - query.length) + shownQuery;
  }
  const params = req.params as Record<string, string | undefined>;
  const path = pattern.replace(/:(\w+)/g, (whole, name: string) =>
    name === 'memberId' || params[name] === undefined ? whole : encodeURIComponent(params[name]),
  );
  return `${req.baseUrl}${path}${shownQuery}`;
}

export function accessLog(log: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    trackRequest(log, metrics, req, res, () => ({
      // The route pattern, not the URL: member ids must not become label values.
      route: routePattern(req),
      url: loggedUrl(req),
      keyName: principalOf(res)?.name,
    }));
    next();
  };
}

/** What the line names, asked for once the answer is done (the route is known by then). */
interface Answered {
  route: string;
  url: string;
  keyName: string | undefined;
}

/** The request id, then at the end the line and the latency. */
function trackRequest(
  log: Logger,
  metrics: Metrics,
  req: IncomingMessage,
  res: ServerResponse,
  answered: () => Answered,
): void {
  const started = performance.now();
  const header = req.headers['x-request-id'];
  const id = (typeof header === 'string' && header.slice(0, 64)) || randomUUID();
  res.setHeader('x-request-id', id);
  // One listener: 'close' follows 'finish' on every response, and on a client that hung up
  // before the answer was sent (logged too, as 'request aborted').
  res.once('close', () => {
    const completed = res.writableFinished;
    const ms = performance.now() - started;
    const what = answered();
    if (completed)
      metrics.httpDuration.observe(
        { method: req.method!, route: what.route, status: String(res.statusCode) },
        ms / 1000,
      );
    if (!UNLOGGED.has(req.url!) && log.isLevelEnabled('info'))
      logLine(log, req.method!, what, completed ? res.statusCode : null, id, ms, completed);
  });
}

function logLine(
  log: Logger,
  method: string,
  what: Answered,
  statusCode: number | null,
  id: string,
  ms: number,
  completed: boolean,
): void {
  log.info(
    {
      reqId: id,
      req: { method, url: what.url },
      res: { statusCode },
      responseTime: Math.round(ms * 10) / 10,
      keyName: what.keyName,
    },
    completed ? 'request completed' : 'request aborted',
  );
}
