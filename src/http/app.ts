import express, { type Express, type RequestHandler } from 'express';
import { QueueEvents, QueueKeys } from 'bullmq';
import type { AppContext } from '../context.js';
import { ApiKeyVerifier } from '../services/api-keys.js';
import { createWorkerRedis, onConnectionError, queueTarget } from '../storage/redis/connections.js';
import { SCORE_EVENTS_QUEUE, queuePrefix } from '../queue/score-events-queue.js';
import { authenticate, rejectInvalidKeys } from './auth.js';
import { accessLog } from './access-log.js';
import { errorHandler, HttpError, notFound } from './errors.js';
import { rateLimit } from './rate-limit.js';
import { apiHeaders } from './security-headers.js';
import { adminKeyRoutes } from './routes/admin-key-routes.js';
import { boardRoutes } from './routes/board-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { standingsRoutes } from './routes/standings-routes.js';
import { memberRoutes } from './routes/member-routes.js';
import { adminRebuildRoutes } from './routes/admin-rebuild-routes.js';
import { operationsRoutes } from './routes/operations-routes.js';
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
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (!hasBody) return next();
  if (length !== undefined && Number(length) > MAX_BODY_BYTES) {
    throw new HttpError(413, 'payload_too_large', `request body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
  }
  if (!req.is(JSON_TYPES)) {
    throw new HttpError(415, 'unsupported_media_type', 'request body must be JSON: send Content-Type: application/json');
  }
  next();
};

export interface WebApp {
  app: Express;
  /** What /readyz answers; the process drains it on shutdown. */
  readiness: Readiness;
  close(): Promise<void>;
}

/** The HTTP side: intake, query API and operations routes over one context. */
export function createWebApp(ctx: AppContext, readiness: Readiness = laurelReadiness(ctx, 'web')): WebApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', ctx.env.TRUST_PROXY);
  const verifier = new ApiKeyVerifier(ctx.db, ctx.env.ADMIN_API_KEY, ctx.env.API_KEY_CACHE_SECONDS * 1000);

  // Created on the first ?wait=true: it holds a blocking Redis connection of its own.
  let queueEvents: Promise<QueueEvents> | undefined;
  const listenerConnections: Array<{ disconnect(): void }> = [];
  const openQueueEvents = async () => {
    const connection = createWorkerRedis(queueTarget(ctx.env), 'laurel-queue-events');
    onConnectionError(connection, () => undefined);
    const prefix = queuePrefix(ctx.env.REDIS_PREFIX, SCORE_EVENTS_QUEUE);
    // Read on from the stream's end as it is now, not from wherever it is when the blocking
    // read reaches Redis (later, on a cluster's lazily connected node): a job finishing in
    // between would otherwise be missed and its ?wait=true time out.
    const last = await connection
      .xrevrange(new QueueKeys(prefix).toKey(SCORE_EVENTS_QUEUE, 'events'), '+', '-', 'COUNT', 1)
      .catch((err: unknown) => {
        connection.disconnect();
        throw err;
      });
    const events = new QueueEvents(SCORE_EVENTS_QUEUE, { connection, prefix, lastEventId: last[0]?.[0] ?? '0-0' });
    events.on('error', (err) => ctx.log.warn({ err: err.message }, 'queue events error'));
    // BullMQ does not close a connection it was handed: ours goes when the app closes.
    listenerConnections.push(connection);
    return events;
  };
  const getQueueEvents = () =>
    (queueEvents ??= openQueueEvents().catch((err: unknown) => {
      queueEvents = undefined;
      throw err;
    }));

  app.use(apiHeaders);
  app.use(accessLog(ctx.log, ctx.metrics));
  // Probes need no key and spend no budget.
  app.use(healthRoutes(readiness));
  // Key, then budget, then body: an unknown key or an exhausted budget is refused before
  // the body is read.
  app.use(authenticate(verifier));
  app.use(
    rateLimit(
      ctx.leaderboard.redis,
      {
        windowSeconds: ctx.env.RATE_LIMIT_WINDOW_SECONDS,
        perKey: ctx.env.RATE_LIMIT_PER_KEY,
        perIp: ctx.env.RATE_LIMIT_PER_IP,
        keyPrefix: ctx.env.REDIS_PREFIX,
      },
      ctx.log,
    ),
  );
  app.use(rejectInvalidKeys);
  app.use(checkBody);
  app.use(express.json({ limit: MAX_BODY_BYTES, strict: false, type: JSON_TYPES }));
  app.use(boardRoutes(ctx, verifier));
  app.use(eventRoutes(ctx, verifier, getQueueEvents));
  app.use(standingsRoutes(ctx, verifier));
  app.use(memberRoutes(ctx, verifier));
  app.use(adminKeyRoutes(ctx, verifier));
  app.use(adminRebuildRoutes(ctx, verifier));
  app.use(operationsRoutes(ctx, verifier));
  app.use((req, _res, next) => next(notFound(`no route for ${req.method} ${req.path}`)));
  app.use(errorHandler(ctx.log));

  return {
    app,
    readiness,
    async close() {
      await queueEvents?.then((events) => events.close()).catch(() => undefined);
      for (const connection of listenerConnections) connection.disconnect();
    },
  };
}
