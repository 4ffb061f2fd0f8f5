import express, { type Express } from 'express';
import { QueueEvents } from 'bullmq';
import type { AppContext } from '../context.js';
import { ApiKeyVerifier } from '../services/api-keys.js';
import { createWorkerRedis } from '../storage/redis/connections.js';
import { SCORE_EVENTS_QUEUE, queuePrefix } from '../queue/score-events-queue.js';
import { accessLog } from './access-log.js';
import { errorHandler, notFound } from './errors.js';
import { adminKeyRoutes } from './routes/admin-key-routes.js';
import { boardRoutes } from './routes/board-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { standingsRoutes } from './routes/standings-routes.js';
import { memberRoutes } from './routes/member-routes.js';
import { adminRebuildRoutes } from './routes/admin-rebuild-routes.js';
import { operationsRoutes } from './routes/operations-routes.js';

export const MAX_BODY = '1mb';

export interface WebApp {
  app: Express;
  close(): Promise<void>;
}

/** The HTTP side: intake, query API and operations routes over one context. */
export function createWebApp(ctx: AppContext): WebApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const verifier = new ApiKeyVerifier(ctx.db, ctx.env.ADMIN_API_KEY, ctx.env.API_KEY_CACHE_SECONDS * 1000);

  // Created on the first ?wait=true: it holds a blocking Redis connection of its own.
  let queueEvents: QueueEvents | undefined;
  const getQueueEvents = () => {
    if (!queueEvents) {
      const connection = createWorkerRedis(ctx.env.REDIS_URL, 'laurel-queue-events');
      connection.on('error', () => undefined);
      queueEvents = new QueueEvents(SCORE_EVENTS_QUEUE, {
        connection,
        prefix: queuePrefix(ctx.env.REDIS_PREFIX, SCORE_EVENTS_QUEUE),
      });
      queueEvents.on('error', (err) => ctx.log.warn({ err: err.message }, 'queue events error'));
    }
    return queueEvents;
  };

  app.use(accessLog(ctx.log, ctx.metrics));
  app.use(express.json({ limit: MAX_BODY, strict: false }));
  app.use(healthRoutes(ctx));
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
    async close() {
      await queueEvents?.close().catch(() => undefined);
    },
  };
}
