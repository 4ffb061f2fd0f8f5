import type { IRouter } from 'express';
import type { AppContext } from '../../context.js';
import { enterEntrant, entrantsPage } from '../../services/entrants-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';
import { aboutClosedPeriod, replyRead } from '../read-reply.js';

/** Entrants of maxMembers boards (docs/design/leagues.md). */
export function entrantRoutes(router: IRouter, ctx: AppContext): void {
  const ingest = requireRole('ingest');
  const read = requireRole('read', { publicReads: ctx.env.PUBLIC_READS });
  const cors = ctx.env.CORS_ORIGINS;

  router.post('/v1/boards/:boardId/entrants/:memberId', ingest, async (req, res) => {
    const { created, entry } = await enterEntrant(ctx, param(req, 'boardId'), param(req, 'memberId'));
    res.status(created ? 201 : 200).json(entry);
  });
  router.get('/v1/boards/:boardId/entrants', read, async (req, res) => {
    const page = await entrantsPage(ctx, param(req, 'boardId'), req.query);
    replyRead(res, cors, page, aboutClosedPeriod(page));
  });
}
