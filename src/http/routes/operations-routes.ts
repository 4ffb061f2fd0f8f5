import { Router, type RequestHandler } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import swaggerUi from 'swagger-ui-express';
import type { AppContext } from '../../context.js';
import { roleAllows, type ApiKeyVerifier } from '../../services/api-keys.js';
import { metricsText } from '../../observability/cluster-metrics.js';
import { openApiDocument } from '../openapi.js';
import { requireRole } from '../auth.js';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Browsers cannot send a bearer header, so Bull Board also accepts HTTP basic auth with
 * the admin key as password (any user name); without it the browser is asked to log in.
 */
function browserAdmin(verifier: ApiKeyVerifier): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization') ?? '';
    let key: string | undefined;
    const basic = /^Basic\s+(\S+)$/i.exec(header);
    if (basic) key = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').slice(1).join(':');
    const bearer = /^Bearer\s+(\S+)$/i.exec(header);
    if (bearer) key = bearer[1];
    const principal = key ? await verifier.verify(key) : null;
    if (!principal) {
      res.set('WWW-Authenticate', 'Basic realm="Laurel queues", charset="UTF-8"');
      res.status(401).json({ error: 'unauthorized', message: 'log in with the admin API key as password' });
      return;
    }
    if (!roleAllows(principal.role, 'admin')) {
      res.status(403).json({ error: 'forbidden', message: `the key "${principal.name}" is not an admin key` });
      return;
    }
    res.locals.principal = principal;
    next();
  };
}

export function operationsRoutes(ctx: AppContext, verifier: ApiKeyVerifier): Router {
  const router = Router();
  const admin = requireRole(verifier, 'admin');

  router.get('/metrics', admin, async (_req, res) => {
    res.set('Content-Type', ctx.metrics.registry.contentType);
    res.send(await metricsText(ctx.metrics.registry));
  });

  const document = openApiDocument();
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.use('/docs', swaggerUi.serve, swaggerUi.setup(undefined, { swaggerOptions: { url: '/openapi.json' } }));

  const board = new ExpressAdapter();
  board.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: [ctx.scoreQueue, ctx.rebuildQueue, ctx.periodsQueue, ctx.webhooksQueue].map((q) => new BullMQAdapter(q)),
    serverAdapter: board,
  });
  router.use(BULL_BOARD_PATH, browserAdmin(verifier), board.getRouter());
  return router;
}
