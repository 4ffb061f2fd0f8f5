import type { RequestListener } from 'node:http';
import compression from 'compression';
import proxyaddr from 'proxy-addr';
import express, { type Express, type RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { ApiKeyVerifier } from '../services/api-keys.js';
import { createResultListener } from '../services/intake-service.js';
import { authenticate } from './auth.js';
import { accessLog } from './access-log.js';
import { errorHandler } from './errors.js';
import { createBudgets, type Budgets } from './rate-limit.js';
import { startAnswer, type CorsPolicy } from './answer-headers.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { apiHeaders } from './security-headers.js';
import { adminKeyRoutes } from './routes/admin-key-routes.js';
import { entrantRoutes } from './routes/entrant-routes.js';
import { leagueRoutes } from './routes/league-routes.js';
import { boardRoutes } from './routes/board-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { standingsRoutes } from './routes/standings-routes.js';
import { memberRoutes } from './routes/member-routes.js';
import { adminRebuildRoutes } from './routes/admin-rebuild-routes.js';
import { operationsRoutes } from './routes/operations-routes.js';
import { consoleRoutes } from './routes/console-routes.js';
import { withDoor } from './door.js';
import type { EtagOf } from './json-answer.js';
import { readBody } from './request-body.js';
import { hotRouter, hotRoutes } from './routes/hot-routes.js';
import { StreamHub } from '../services/realtime/stream-hub.js';
import { laurelReadiness } from '../health/laurel-checks.js';
import type { Readiness } from '../health/readiness.js';

/** Answers over this size are compressed when the client accepts it. */
export const COMPRESS_ABOVE_BYTES = 4096;

/** Event streams never get here (`stream-door.ts`), so nothing holds a message back to compress it. */
export const compress = compression({ threshold: COMPRESS_ABOVE_BYTES });

/** `startAnswer` for every Express route but the probes. */
function answerHeaders(cors: CorsPolicy): RequestHandler {
  return (req, res, next) => {
    if (!startAnswer(req, res, cors)) next();
  };
}

export interface WebApp {
  /** What the HTTP server runs: the door (`door.ts`: event streams and hot routes), then the Express app. */
  handler: RequestListener;
  app: Express;
  /** Ends the event streams, which would otherwise hold the server open (clients reconnect elsewhere). */
  closeStreams(): void;
  /** What /readyz answers; the process drains it on shutdown. */
  readiness: Readiness;
  /** What admits a request (`admit` in auth.ts), for any other front end of the same process. */
  admission: { verifier: ApiKeyVerifier; budgets: Budgets };
  close(): Promise<void>;
}

/** The HTTP side: intake, query API and operations routes over one context. */
export function createWebApp(ctx: AppContext, readiness: Readiness = laurelReadiness(ctx, 'web')): WebApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', ctx.env.TRUST_PROXY);
  const verifier = new ApiKeyVerifier(ctx.db, ctx.env.ADMIN_API_KEY, ctx.env.API_KEY_CACHE_SECONDS * 1000);

  const listener = createResultListener(ctx);

  app.use(apiHeaders);
  app.use(accessLog(ctx.log, ctx.metrics));
  app.use(answerHeaders({ origins: ctx.env.CORS_ORIGINS }));
  app.use(compress);
  // Probes need no key and spend no budget.
  app.use(healthRoutes(readiness));
  // Key and budget, then body: an unknown key, an exhausted budget or a keyless write is
  // refused before the body is read.
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
  app.use(authenticate(verifier, budgets));
  app.use(readBody);
  const cors = { origins: ctx.env.CORS_ORIGINS };
  const hot = hotRoutes(ctx, listener);
  app.use(hotRouter(ctx, verifier, hot, cors));
  app.use(boardRoutes(ctx, verifier));
  app.use(eventRoutes(ctx, verifier));
  app.use(standingsRoutes(ctx, verifier));
  app.use(entrantRoutes(ctx, verifier));
  app.use(leagueRoutes(ctx, verifier));
  app.use(memberRoutes(ctx, verifier));
  app.use(adminKeyRoutes(ctx, verifier));
  app.use(adminRebuildRoutes(ctx, verifier));
  app.use(operationsRoutes(ctx, verifier));
  app.use(consoleRoutes());
  app.use(methodNotAllowed(app));
  app.use(errorHandler(ctx.log, ctx.failures, ctx.failureOf));

  const streams = new StreamHub(ctx);
  const trustProxy = app.get('trust proxy fn') as Parameters<typeof proxyaddr>[1];
  const handler = withDoor(
    { ctx, verifier, budgets, hub: streams, cors, clientIp: (req) => proxyaddr(req, trustProxy), etagOf: app.get('etag fn') as EtagOf, compress, app, routes: hot },
    app,
  );

  return {
    handler,
    app,
    closeStreams: () => streams.close(),
    readiness,
    admission: { verifier, budgets },
    async close() {
      streams.close();
      await listener.close();
    },
  };
}
