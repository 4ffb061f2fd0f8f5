import type { Request, RequestHandler, Response } from 'express';
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
 * headers, so no Authorization value can reach the log; the logger's redaction still applies.
 */
export function accessLog(log: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const header = req.headers['x-request-id'];
    const id = (typeof header === 'string' && header.slice(0, 64)) || randomUUID();
    res.setHeader('x-request-id', id);
    let done = false;
    const finished = (completed: boolean) => {
      if (done) return;
      done = true;
      const ms = performance.now() - started;
      if (completed) {
        // The route pattern, not the URL: member ids must not become label values.
        const pattern = (req.route as { path?: string } | undefined)?.path;
        const route = pattern ? `${req.baseUrl}${pattern}` : 'unmatched';
        metrics.httpDuration.observe({ method: req.method, route, status: String(res.statusCode) }, ms / 1000);
      }
      if (!UNLOGGED.has(req.url) && log.isLevelEnabled('info')) logLine(log, req, res, id, ms, completed);
    };
    res.once('finish', () => finished(true));
    // A client that hangs up before the answer is logged too (pino-http did the same).
    res.once('close', () => finished(false));
    next();
  };
}

function logLine(log: Logger, req: Request, res: Response, id: string, ms: number, completed: boolean): void {
  log.info(
    {
      reqId: id,
      req: { method: req.method, url: req.originalUrl },
      res: { statusCode: completed ? res.statusCode : null },
      responseTime: Math.round(ms * 10) / 10,
      keyName: principalOf(res)?.name,
    },
    completed ? 'request completed' : 'request aborted',
  );
}
