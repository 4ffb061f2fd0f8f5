import { type IRouter, type RequestHandler } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import swaggerUi from 'swagger-ui-express';
import type { AppContext } from '../../context.js';
import { roleAllows } from '../../services/api-keys.js';
import { metricsText } from '../../observability/cluster-metrics.js';
import { openApiDocument } from '../openapi.js';
import { BULL_BOARD_PATH, principalOf, requireRole, unauthorized } from '../auth.js';
import { HttpError } from '../errors.js';
import { htmlPageHeaders } from '../security-headers.js';
import { guardBullBoardWrites } from '../bull-board-guard.js';

export { BULL_BOARD_PATH };

/**
 * Bull Board for admins. Browsers cannot send a bearer header, so `authenticate` also reads
 * HTTP basic auth (the admin key as password); without a key the browser is asked to log in.
 */
function browserAdmin(): RequestHandler {
  return (req, res, next) => {
    const principal = principalOf(res);
    if (!principal) throw unauthorized(req.originalUrl, 'log in with the admin API key as password');
    if (!roleAllows(principal.role, 'admin'))
      throw new HttpError(403, 'forbidden', `the key "${principal.name}" is not an admin key`);
    next();
  };
}

/** `GET /metrics` for metrics and admin keys: the one metrics route, on web and worker processes. */
export function metricsRoute(router: IRouter, ctx: Pick<AppContext, 'metrics'>): void {
  router.get('/metrics', requireRole('metrics'), async (_req, res) => {
    res.set('Content-Type', ctx.metrics.registry.contentType);
    res.send(await metricsText(ctx.metrics.registry));
  });
}

export function operationsRoutes(router: IRouter, ctx: AppContext): void {
  metricsRoute(router, ctx);

  const document = openApiDocument();
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.use(
    '/docs',
    htmlPageHeaders,
    swaggerUi.serve,
    swaggerUi.setup(undefined, { swaggerOptions: { url: '/openapi.json' } }),
  );

  const board = new ExpressAdapter();
  board.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: [ctx.scoreQueue, ctx.rebuildQueue, ctx.periodsQueue, ctx.webhooksQueue].map(
      (q) => new BullMQAdapter(q, { readOnlyMode: !ctx.env.BULL_BOARD_WRITE }),
    ),
    serverAdapter: board,
  });
  router.use(
    BULL_BOARD_PATH,
    browserAdmin(),
    guardBullBoardWrites(ctx.env.BULL_BOARD_WRITE),
    htmlPageHeaders,
    board.getRouter() as RequestHandler,
  );
}
