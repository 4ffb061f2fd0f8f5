import type { IRouter } from 'express';
import type { AppContext } from '../../context.js';
import { bucketLeague, memberLeague, memberLeagues } from '../../services/league-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';
import { aboutClosedPeriod, replyRead } from '../read-reply.js';

/** League reads (docs/design/leagues.md). */
export function leagueRoutes(router: IRouter, ctx: AppContext): void {
  const read = requireRole('read', { publicReads: ctx.env.PUBLIC_READS });
  const cors = ctx.env.CORS_ORIGINS;

  router.get('/v1/boards/:boardId/standings/:memberId/league', read, async (req, res) => {
    const body = await memberLeague(ctx, param(req, 'boardId'), param(req, 'memberId'), req.query);
    replyRead(res, cors, body, aboutClosedPeriod(body));
  });
  router.get('/v1/boards/:boardId/league/:bucket', read, async (req, res) => {
    const body = await bucketLeague(ctx, param(req, 'boardId'), param(req, 'bucket'), req.query);
    replyRead(res, cors, body, aboutClosedPeriod(body));
  });
  router.get('/v1/members/:memberId/leagues', read, async (req, res) => {
    replyRead(res, cors, await memberLeagues(ctx, param(req, 'memberId')));
  });
}
