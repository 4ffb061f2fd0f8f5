import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { hashKey } from '../services/api-keys.js';
import type { Readiness } from './readiness.js';

export interface ProbeServerOptions {
  readiness: Readiness;
  registry: Registry;
  adminKey: string;
}

/**
 * The HTTP side of a worker-only process: liveness, readiness and metrics on METRICS_PORT.
 * Metrics are admin-only, as on the web side (a Prometheus scrape sends the admin key as
 * its bearer token); the probes are open, like the web side's.
 */
export function probeHandler(options: ProbeServerOptions): RequestListener {
  const adminHash = Buffer.from(hashKey(options.adminKey), 'hex');
  const isAdmin = (req: IncomingMessage) => {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    return match !== null && timingSafeEqual(Buffer.from(hashKey(match[1]!), 'hex'), adminHash);
  };
  const json = (res: ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));

  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return json(res, 405, { error: 'method_not_allowed', message: 'only GET is served here' });
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      return void options.readiness.report().then((r) => json(res, r.ready ? 200 : 503, r.body));
    }
    if (path === '/metrics') {
      if (!isAdmin(req))
        return json(res, 401, { error: 'unauthorized', message: 'metrics need the admin API key as a bearer token' });
      return void options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        () => json(res, 500, { error: 'internal', message: 'metrics could not be collected' }),
      );
    }
    json(res, 404, { error: 'not_found', message: `no route for ${req.method} ${path}` });
  };
}
