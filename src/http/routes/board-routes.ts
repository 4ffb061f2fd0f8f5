import type { IRouter } from 'express';
import type { AppContext } from '../../context.js';
import { getBoardView, listBoardViews, putBoard } from '../../services/boards-service.js';
import { param } from '../params.js';
import { principalOf, requireRole } from '../auth.js';
import { closePeriodNow } from '../../services/close-now.js';
import { removeMemberFromPeriod } from '../../services/moderation-service.js';
import { replyRead } from '../read-reply.js';

export function boardRoutes(router: IRouter, ctx: AppContext): void {
  const read = requireRole('read', { publicReads: ctx.env.PUBLIC_READS });
  const admin = requireRole('admin');
  const cors = ctx.env.CORS_ORIGINS;

  router.put('/v1/boards/:boardId', admin, async (req, res) => {
    const { created, board } = await putBoard(ctx, param(req, 'boardId'), req.body);
    if (created) res.location(`/v1/boards/${encodeURIComponent(board.id)}`);
    res.status(created ? 201 : 200).json(board);
  });
  router.post('/v1/boards/:boardId/periods/:periodKey/close', admin, async (req, res) => {
    const boardId = param(req, 'boardId');
    const periodKey = param(req, 'periodKey');
    res.status(202).json(await closePeriodNow(ctx, boardId, periodKey, req.body, principalOf(res)!.name));
  });
  router.delete('/v1/boards/:boardId/members/:memberId', admin, async (req, res) => {
    const by = principalOf(res)!.name;
    const removed = await removeMemberFromPeriod(
      ctx,
      param(req, 'boardId'),
      param(req, 'memberId'),
      req.query,
      req.body,
      by,
    );
    res.json(removed);
  });
  router.get('/v1/boards', read, async (_req, res) => {
    replyRead(res, cors, { boards: await listBoardViews(ctx) });
  });
  router.get('/v1/boards/:boardId', read, async (req, res) => {
    replyRead(res, cors, await getBoardView(ctx, param(req, 'boardId')));
  });
}
