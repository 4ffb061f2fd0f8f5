import { Router, type Response } from 'express';
import type { AppContext } from '../../context.js';
import type { ApiKeyVerifier } from '../../services/api-keys.js';
import { boardPeriods, periodResults } from '../../services/period-results-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';
import { aboutClosedPeriod, replyRead } from '../read-reply.js';

/** Periods and results; the standings themselves are hot routes (`hot-routes.ts`). */
export function standingsRoutes(ctx: AppContext, verifier: ApiKeyVerifier): Router {
  const router = Router();
  const read = requireRole(verifier, 'read', { publicReads: ctx.env.PUBLIC_READS });
  const cors = { origins: ctx.env.CORS_ORIGINS };
  const reply = (res: Response, body: { period: { state: string } }) => replyRead(res, cors, body, aboutClosedPeriod(body));

  router.get('/v1/boards/:boardId/periods', read, async (req, res) => {
    replyRead(res, cors, await boardPeriods(ctx, param(req, 'boardId'), req.query));
  });
  router.get('/v1/boards/:boardId/periods/:periodKey/results', read, async (req, res) => {
    reply(res, await periodResults(ctx, param(req, 'boardId'), param(req, 'periodKey'), req.query));
  });
  return router;
}
