import compression from 'compression';
import express, { type Express, type RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { ApiKeyVerifier } from '../services/api-keys.js';
import { createResultListener } from '../services/intake-service.js';
import { authenticate, declaresBody, takesBody } from './auth.js';
import { accessLog } from './access-log.js';
import { errorHandler, HttpError } from './errors.js';
import { createBudgets, type Budgets } from './rate-limit.js';
import { answerPreflight, setCacheControl, setCorsHeaders, type CorsPolicy } from './answer-headers.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { apiHeaders } from './security-headers.js';
import { adminKeyRoutes } from './routes/admin-key-routes.js';
import { boardRoutes } from './routes/board-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { standingsRoutes } from './routes/standings-routes.js';
import { memberRoutes } from './routes/member-routes.js';
import { adminRebuildRoutes } from './routes/admin-rebuild-routes.js';
import { operationsRoutes } from './routes/operations-routes.js';
import { streamRoutes } from './routes/stream-routes.js';
import { StreamHub } from '../services/realtime/stream-hub.js';
import { laurelReadiness } from '../health/laurel-checks.js';
import type { Readiness } from '../health/readiness.js';

/** Largest request body read; a larger one is a 413 before it is parsed. */
export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * Refuses, before anything reads the body: a declared length over the limit (413, answered
 * at once instead of after the upload), and a body that is not JSON (415, rather than
 * ignored and then reported as missing fields). A chunked body over the limit is stopped by
 * the JSON parser once it has read just past the limit.
 */
const checkBody: RequestHandler = (req, _res, next) => {
  if (!takesBody(req.method) || !declaresBody(req.headers)) return next();
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > MAX_BODY_BYTES) {
    throw new HttpError(413, 'payload_too_large', `request body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
  }
  if (!req.is(JSON_TYPES)) {
    throw new HttpError(415, 'unsupported_media_type', 'request body must be JSON: send Content-Type: application/json');
  }
  next();
};

/** Answers over this size are compressed when the client accepts it. */
export const COMPRESS_ABOVE_BYTES = 4096;

/** Compression, except for event streams, which must reach the client message by message. */
const compress = compression({
  threshold: COMPRESS_ABOVE_BYTES,
  filter: (req, res) => !String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') && compression.filter(req, res),
});

/**
 * CORS on every answer, preflights answered before any key is looked for (browsers send
 * none with them), and `no-store` unless a read route says its answer may be reused.
 */
function answerHeaders(cors: CorsPolicy): RequestHandler {
  return (req, res, next) => {
    setCorsHeaders(req, res, cors);
    if (answerPreflight(req, res, cors)) return;
    setCacheControl(res, 'none');
    next();
  };
}

export interface WebApp {
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
  app.use(checkBody);
  const json = express.json({ limit: MAX_BODY_BYTES, strict: false, type: JSON_TYPES });
  app.use((req, res, next) => (takesBody(req.method) ? json(req, res, next) : next()));
  app.use(boardRoutes(ctx, verifier));
  app.use(eventRoutes(ctx, verifier, listener));
  const streams = new StreamHub(ctx);
  app.use(streamRoutes(ctx, verifier, streams));
  app.use(standingsRoutes(ctx, verifier));
  app.use(memberRoutes(ctx, verifier));
  app.use(adminKeyRoutes(ctx, verifier));
  app.use(adminRebuildRoutes(ctx, verifier));
  app.use(operationsRoutes(ctx, verifier));
  app.use(methodNotAllowed(app));
  app.use(errorHandler(ctx.log, ctx.failureOf));

  return {
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
