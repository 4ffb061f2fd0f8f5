import type { RequestListener } from 'node:http';
import compression from 'compression';
import express, { type Express, type RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { ApiKeyVerifier } from '../services/api-keys.js';
import { createIntake } from '../services/intake-service.js';
import { authenticate } from './auth.js';
import { accessLog } from './access-log.js';
import { errorHandler } from './errors.js';
import { createBudgets } from './rate-limit.js';
import { answerStart } from './answer-headers.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { readBody } from './request-body.js';
import { adminKeyRoutes } from './routes/admin-key-routes.js';
import { entrantRoutes } from './routes/entrant-routes.js';
import { leagueRoutes } from './routes/league-routes.js';
import { boardRoutes } from './routes/board-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { standingsRoutes } from './routes/standings-routes.js';
import { streamRoutes } from './routes/stream-routes.js';
import { memberRoutes } from './routes/member-routes.js';
import { adminRebuildRoutes } from './routes/admin-rebuild-routes.js';
import { operationsRoutes } from './routes/operations-routes.js';
import { consoleRoutes } from './routes/console-routes.js';
import { StreamHub } from '../services/realtime/stream-hub.js';
import { laurelReadiness } from '../health/laurel-checks.js';
import type { Readiness } from '../health/readiness.js';

/** Answers over this size are compressed when the client accepts it. */
export const COMPRESS_ABOVE_BYTES = 4096;

/**
 * Compression for clients that accept it. A client that sends no Accept-Encoding (most
 * game servers) skips the middleware, and with it the wrappers it puts around every response.
 */
function compressWhenAccepted(): RequestHandler {
  const compress = compression({ threshold: COMPRESS_ABOVE_BYTES });
  return (req, res, next) => (req.headers['accept-encoding'] ? compress(req, res, next) : next());
}

export interface WebApp {
  /** What the HTTP server runs: the Express app. */
  handler: RequestListener;
  app: Express;
  /** Ends the event streams, which would otherwise hold the server open (clients reconnect elsewhere). */
  closeStreams(): void;
  /** What /readyz answers; the process drains it on shutdown. */
  readiness: Readiness;
  close(): Promise<void>;
}

/**
 * The HTTP side: one Express middleware chain for every route. In order: the request id and
 * access log; the headers every answer starts with (security block, `no-store`, CORS and
 * preflights); the probes (no key, no budget); admission (key and budget, before any body is
 * read: an unknown key, an exhausted budget or a keyless write is refused unread); the event
 * streams, which need nothing after that; compression and the JSON body; then every other
 * route, intake and the standings reads first; 405/404; errors. Routes are the app's own, not
 * routers mounted in it: a request is matched once, by one router.
 */
export function createWebApp(ctx: AppContext, readiness: Readiness = laurelReadiness(ctx, 'web')): WebApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', ctx.env.TRUST_PROXY);
  const verifier = new ApiKeyVerifier(ctx.db, ctx.env.ADMIN_API_KEY, ctx.env.API_KEY_CACHE_SECONDS * 1000);
  const intake = createIntake(ctx);
  const budgets = createBudgets(
    ctx.leaderboard.redis,
    {
      windowSeconds: ctx.env.RATE_LIMIT_WINDOW_SECONDS,
      perKey: ctx.env.RATE_LIMIT_PER_KEY,
      perIp: ctx.env.RATE_LIMIT_PER_IP,
      lookupsPerIp: ctx.env.RATE_LIMIT_KEY_LOOKUPS_PER_IP,
      keyPrefix: ctx.env.REDIS_PREFIX,
    },
    ctx.log,
  );
  const streams = new StreamHub(ctx);

  // Every route is the app's own: one router, tried in this order.
  app.use(accessLog(ctx.log, ctx.metrics));
  app.use(answerStart(ctx.env.CORS_ORIGINS));
  healthRoutes(app, readiness);
  app.use(authenticate(verifier, budgets));
  streamRoutes(app, ctx, streams);
  app.use(compressWhenAccepted());
  app.use(readBody);
  eventRoutes(app, ctx, intake);
  standingsRoutes(app, ctx);
  memberRoutes(app, ctx);
  boardRoutes(app, ctx);
  entrantRoutes(app, ctx);
  leagueRoutes(app, ctx);
  adminKeyRoutes(app, ctx, verifier);
  adminRebuildRoutes(app, ctx);
  operationsRoutes(app, ctx);
  consoleRoutes(app);
  app.use(methodNotAllowed(app));
  app.use(errorHandler(ctx.log, ctx.failures, ctx.failureOf));

  return {
    handler: app,
    app,
    closeStreams: () => streams.close(),
    readiness,
    async close() {
      streams.close();
      await intake.close();
    },
  };
}
