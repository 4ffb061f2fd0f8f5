import type { IRouter } from 'express';
import type { AppContext } from '../../context.js';
import { getBoardView, listBoardViews, putBoard } from '../../services/boards-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';
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
  router.get('/v1/boards', read, async (_req, res) => {
    replyRead(res, cors, { boards: await listBoardViews(ctx) });
  });
  router.get('/v1/boards/:boardId', read, async (req, res) => {
    replyRead(res, cors, await getBoardView(ctx, param(req, 'boardId')));
  });
}
