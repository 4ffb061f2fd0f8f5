import { type IRouter, type Response } from 'express';
import type { AppContext } from '../../context.js';
import { boardPeriods, periodResults } from '../../services/period-results-service.js';
import { aroundMember, followingStandings, memberStanding, standingsPage } from '../../services/standings-service.js';
import { memberGoals } from '../../services/goals-service.js';
import { scopeCutoffs } from '../../services/cutoffs-service.js';
import { boardRegions } from '../../services/regions-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';
import { aboutClosedPeriod, replyRead } from '../read-reply.js';

/**
 * The standings reads, periods, results and the regions ranked in a period. Registered right after intake: most requests
 * are these, and the router tries routes in order. (The event streams under
 * `/standings/.../stream` are `stream-routes.ts`.)
 */
export function standingsRoutes(router: IRouter, ctx: AppContext): void {
  const read = requireRole('read', { publicReads: ctx.env.PUBLIC_READS });
  const cors = ctx.env.CORS_ORIGINS;
  const reply = (res: Response, body: { period: { state: string } }) =>
    replyRead(res, cors, body, aboutClosedPeriod(body));

  router.get('/v1/boards/:boardId/standings', read, async (req, res) => {
    reply(res, await standingsPage(ctx, param(req, 'boardId'), req.query));
  });
  router.get('/v1/boards/:boardId/standings/:memberId', read, async (req, res) => {
    reply(res, await memberStanding(ctx, param(req, 'boardId'), param(req, 'memberId'), req.query));
  });
  router.get('/v1/boards/:boardId/standings/:memberId/around', read, async (req, res) => {
    reply(res, await aroundMember(ctx, param(req, 'boardId'), param(req, 'memberId'), req.query));
  });
  router.get('/v1/boards/:boardId/standings/:memberId/following', read, async (req, res) => {
    reply(res, await followingStandings(ctx, param(req, 'boardId'), param(req, 'memberId'), req.query));
  });
  router.get('/v1/boards/:boardId/standings/:memberId/goals', read, async (req, res) => {
    reply(res, await memberGoals(ctx, param(req, 'boardId'), param(req, 'memberId'), req.query));
  });
  router.get('/v1/boards/:boardId/cutoffs', read, async (req, res) => {
    reply(res, await scopeCutoffs(ctx, param(req, 'boardId'), req.query));
  });
  router.get('/v1/boards/:boardId/periods', read, async (req, res) => {
    replyRead(res, cors, await boardPeriods(ctx, param(req, 'boardId'), req.query));
  });
  router.get('/v1/boards/:boardId/regions', read, async (req, res) => {
    reply(res, await boardRegions(ctx, param(req, 'boardId'), req.query));
  });
  router.get('/v1/boards/:boardId/periods/:periodKey/results', read, async (req, res) => {
    reply(res, await periodResults(ctx, param(req, 'boardId'), param(req, 'periodKey'), req.query));
  });
}
