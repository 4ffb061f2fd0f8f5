import { Router } from 'express';
import type { AppContext } from '../../context.js';
import type { ApiKeyVerifier } from '../../services/api-keys.js';
import { eventStatus } from '../../services/event-status.js';
import { acceptEvents, type ResultListener } from '../../services/intake-service.js';
import { param } from '../params.js';
import { principalOf, requireRole } from '../auth.js';
import { voidEvent } from '../../services/moderation-service.js';
import { validationFailed } from '../errors.js';

export function eventRoutes(ctx: AppContext, verifier: ApiKeyVerifier, listener: ResultListener): Router {
  const router = Router();
  const ingest = requireRole(verifier, 'ingest');

  router.post('/v1/events', ingest, async (req, res) => {
    const wait = req.query.wait;
    if (wait !== undefined && wait !== 'true' && wait !== 'false') {
      throw validationFailed('invalid query', [{ path: 'wait', message: 'must be true or false' }]);
    }
    const answer = await acceptEvents(ctx, req.body, { wait: wait === 'true', listener });
    res.status(answer.status).json(answer.body);
  });
  router.post('/v1/events/:idempotencyKey/void', requireRole(verifier, 'admin'), async (req, res) => {
    res.json(await voidEvent(ctx, param(req, 'idempotencyKey'), req.body, principalOf(res)!.name));
  });
  router.get('/v1/events/:idempotencyKey', ingest, async (req, res) => {
    res.json(await eventStatus(ctx, param(req, 'idempotencyKey'), { admin: principalOf(res)?.role === 'admin' }));
  });
  return router;
}
