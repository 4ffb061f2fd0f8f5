import type { IRouter } from 'express';
import type { AppContext } from '../../context.js';
import { rebuildStatus, requestRebuild } from '../../services/rebuild-service.js';
import { stats } from '../../services/stats-service.js';
import { erasureStatus } from '../../services/erasure-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';

export function adminRebuildRoutes(router: IRouter, ctx: AppContext): void {
  const admin = requireRole('admin');

  router.post('/v1/admin/rebuilds', admin, async (req, res) => {
    const { rebuildId, scopes } = await requestRebuild(ctx, req.body, 'api');
    res.location(`/v1/admin/rebuilds/${rebuildId}`).status(202).json({ rebuildId, scopes });
  });
  router.get('/v1/admin/rebuilds/:rebuildId', admin, async (req, res) => {
    res.json(await rebuildStatus(ctx, param(req, 'rebuildId')));
  });
  router.get('/v1/admin/erasures/:erasureId', admin, async (req, res) => {
    res.json(await erasureStatus(ctx, param(req, 'erasureId')));
  });
  router.get('/v1/admin/stats', admin, async (req, res) => {
    res.json(await stats(ctx, req.query));
  });
}
