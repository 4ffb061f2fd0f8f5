import { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.js';
import type { ApiKeyVerifier } from '../../services/api-keys.js';
import { eventStatus } from '../../services/event-status.js';
import { param } from '../params.js';
import { principalOf, requireRole } from '../auth.js';
import { voidEvent } from '../../services/moderation-service.js';

export const intakeQuerySchema = z.object({
  wait: z.enum(['true', 'false']).optional().meta({ description: 'true: answer once applied (at most 5 s), with per-event results' }),
});

/** The event routes but intake itself, which is a hot route (`hot-routes.ts`). */
export function eventRoutes(ctx: AppContext, verifier: ApiKeyVerifier): Router {
  const router = Router();
  const ingest = requireRole(verifier, 'ingest');

  router.post('/v1/events/:idempotencyKey/void', requireRole(verifier, 'admin'), async (req, res) => {
    res.json(await voidEvent(ctx, param(req, 'idempotencyKey'), req.body, principalOf(res)!.name));
  });
  router.get('/v1/events/:idempotencyKey', ingest, async (req, res) => {
    res.json(await eventStatus(ctx, param(req, 'idempotencyKey'), { admin: principalOf(res)?.role === 'admin' }));
  });
  return router;
}
