import { Router } from 'express';
import type { AppContext } from '../../context.js';
import type { ApiKeyVerifier } from '../../services/api-keys.js';
import { putFollowing } from '../../services/members-service.js';
import { memberAcrossBoards } from '../../services/standings-service.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';

export function memberRoutes(ctx: AppContext, verifier: ApiKeyVerifier): Router {
  const router = Router();
  const ingest = requireRole(verifier, 'ingest');
  const read = requireRole(verifier, 'read', { publicReads: ctx.env.PUBLIC_READS });

  router.put('/v1/members/:memberId/following', ingest, async (req, res) => {
    res.json(await putFollowing(ctx, param(req, 'memberId'), req.body));
  });
  router.get('/v1/members/:memberId/standings', read, async (req, res) => {
    res.json(await memberAcrossBoards(ctx, param(req, 'memberId'), req.query));
  });
  return router;
}
