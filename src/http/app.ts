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
import { StreamAdmission } from './stream-admission.js';
import { memberRoutes } from './routes/member-routes.js';
import { playerTokenRoutes } from './routes/player-token-routes.js';
import { PlayerTokens } from '../services/player-tokens.js';
import { adminRebuildRoutes } from './routes/admin-rebuild-routes.js';
import { metricsRoute, operationsRoutes } from './routes/operations-routes.js';
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
  const { app, verifier, tokens } = admittingApp(ctx, readiness);
  const intake = createIntake(ctx);
  const streams = new StreamHub(ctx);

  streamRoutes(app, ctx, streams, new StreamAdmission(ctx.env));
  app.use(compressWhenAccepted());
  app.use(readBody);
  eventRoutes(app, ctx, intake);
  standingsRoutes(app, ctx);
  memberRoutes(app, ctx);
  playerTokenRoutes(app, tokens);
  boardRoutes(app, ctx);
  entrantRoutes(app, ctx);
  leagueRoutes(app, ctx);
  adminKeyRoutes(app, ctx, verifier);
  adminRebuildRoutes(app, ctx);
  operationsRoutes(app, ctx);
  consoleRoutes(app);
  finish(app, ctx);

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

/**
 * The start of both apps' chains, in order: the request id and access log; the headers every
 * answer starts with; the probes (no key, no budget); admission (key and budget). Every route
 * is the app's own: one router, tried in the order routes are added after this.
 */
function admittingApp(
  ctx: AppContext,
  readiness: Readiness,
): { app: Express; verifier: ApiKeyVerifier; tokens: PlayerTokens } {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', ctx.env.TRUST_PROXY);
  const verifier = new ApiKeyVerifier(ctx.db, ctx.env.ADMIN_API_KEY, ctx.env.API_KEY_CACHE_SECONDS * 1000);
  const tokens = new PlayerTokens(ctx.env.PLAYER_TOKEN_SECRET, ctx.clock);
  const budgets = createBudgets(
    ctx.leaderboard.redis,
    {
      windowSeconds: ctx.env.RATE_LIMIT_WINDOW_SECONDS,
      perKey: ctx.env.RATE_LIMIT_PER_KEY,
      perPlayer: ctx.env.RATE_LIMIT_PER_PLAYER,
      perIp: ctx.env.RATE_LIMIT_PER_IP,
      lookupsPerIp: ctx.env.RATE_LIMIT_KEY_LOOKUPS_PER_IP,
      keyPrefix: ctx.env.REDIS_PREFIX,
    },
    ctx.log,
  );
  app.use(accessLog(ctx.log, ctx.metrics));
  app.use(answerStart(ctx.env.CORS_ORIGINS));
  healthRoutes(app, readiness);
  app.use(authenticate(verifier, tokens, budgets));
  return { app, verifier, tokens };
}

/** The end of both chains: 405 or 404 for what no route answered, then the error answers. */
function finish(app: Express, ctx: AppContext): void {
  app.use(methodNotAllowed(app));
  app.use(errorHandler(ctx.log, ctx.failures, ctx.failureOf));
}

/**
 * The HTTP side of a worker-only process (on METRICS_PORT): the probes and `GET /metrics`,
 * through the same chain as the web side's, so keys, roles, budgets, headers and error
 * answers follow the same rules (a metrics or admin key scrapes; a read key is a 403).
 */
export function createProbeApp(ctx: AppContext, readiness: Readiness): RequestListener {
  const { app } = admittingApp(ctx, readiness);
  // Prometheus asks for gzip; a worker's metrics are as large as a web process's.
  app.use(compressWhenAccepted());
  metricsRoute(app, ctx);
  finish(app, ctx);
  return app;
}
