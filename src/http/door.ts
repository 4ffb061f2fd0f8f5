import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Express, RequestHandler } from 'express';
import type { Principal } from '../services/api-keys.js';
import { trackRequest } from './access-log.js';
import { setReadHeaders, startAnswer } from './answer-headers.js';
import { admitRequest, checkRole, takesBody } from './auth.js';
import { sendJson } from './json-answer.js';
import { readBodyOf } from './request-body.js';
import { roleOptions, type HotRoute } from './routes/hot-routes.js';
import { apiHeaders } from './security-headers.js';
import { answerError, matchStream, serveStream, type StreamDoorDeps } from './stream-door.js';

export interface DoorDeps extends StreamDoorDeps {
  /** The Express app behind the door: its router's layers match the hot routes. */
  app: Express;
  routes: readonly HotRoute[];
  /** The app's compression middleware, called where the app calls it. */
  compress: RequestHandler;
}

/** What the router holds for a route: `match` answers the decoded params, or throws a 400 for a bad escape. */
interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: RouteLayer[] };
  match(path: string): { params: Record<string, string> } | false | undefined;
}

function layerOf(app: Express, route: HotRoute): RouteLayer {
  const method = route.method.toLowerCase();
  const find = (stack: readonly RouteLayer[]): RouteLayer | undefined => {
    for (const layer of stack) {
      if (layer.route?.path === route.path && layer.route.methods[method]) return layer;
      const inner = layer.handle?.stack && find(layer.handle.stack);
      if (inner) return inner;
    }
    return undefined;
  };
  const layer = find((app as unknown as { router: { stack: RouteLayer[] } }).router.stack);
  if (!layer) throw new Error(`hot route ${route.method} ${route.path} is not mounted on the app`);
  return layer;
}

const noop = () => undefined;

/**
 * The server's handler: the requests most clients make (the event streams, the standings
 * reads, intake) answered on node's request and response, everything else handed to
 * Express. Express' per-request work (its own request and response objects, a router that
 * tries each mounted router in turn, a promise per middleware) weighs more than a hot read's
 * own: a minimal Express 5 app answered about 6,000 requests/s where bare node:http answered
 * 15,000 with the same Redis call (the bench's two floors). The door runs the app's own steps in the app's order, as the
 * same plain functions: security headers, request id, access log and metrics, CORS,
 * compression, admission (key, budget), body limits and parser, role, the route's answer,
 * Express' JSON sending (ETag, 304) and SPEC §5's errors. Routes are matched by the router's
 * own layers of them; a path they cannot decode, or any other method, goes on to Express,
 * which answers it as it always did.
 */
export function withDoor(deps: DoorDeps, next: RequestListener): RequestListener {
  const hot = deps.routes.map((route) => ({ route, layer: layerOf(deps.app, route) }));
  return (req, res) => {
    const url = req.url!;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const stream = matchStream(path);
    if (stream) return void serveStream(deps, stream, path, req, res);
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    for (const { route, layer } of hot) {
      if (route.method !== method) continue;
      let matched: ReturnType<RouteLayer['match']>;
      try {
        matched = layer.match(path);
      } catch {
        break;
      }
      if (matched) return void serveHot(deps, route, matched.params, path, q < 0 ? '' : url.slice(q + 1), req, res);
    }
    next(req, res);
  };
}

async function serveHot(
  deps: DoorDeps,
  route: HotRoute,
  params: Record<string, string>,
  path: string,
  search: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { ctx } = deps;
  let principal: Principal | undefined;
  apiHeaders(req, res, noop);
  trackRequest(ctx.log, ctx.metrics, req, res, () => ({ route: route.path, url: req.url!, keyName: principal?.name }));
  startAnswer(req, res, deps.cors);
  deps.compress(req as Parameters<RequestHandler>[0], res as Parameters<RequestHandler>[1], noop);
  try {
    principal = await admitRequest(deps.verifier, deps.budgets, { method: req.method!, path, headers: req.headers, ip: deps.clientIp(req) }, res);
    const body = takesBody(req.method!) ? await readBodyOf(req, res) : undefined;
    checkRole(principal, route.role, path, roleOptions(ctx, route));
    const answer = await route.answer({ params, query: parseQuery(search), body, principal });
    if (answer.location) res.setHeader('Location', answer.location);
    if (answer.cache) setReadHeaders(res, answer.cache, deps.cors);
    sendJson(req, res, answer.status, answer.body, deps.etagOf);
  } catch (err) {
    if (!res.headersSent) answerError(deps, err, path, req, res);
  }
}
