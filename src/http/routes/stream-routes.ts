import { Router } from 'express';
import type { AppContext } from '../../context.js';
import type { ApiKeyVerifier } from '../../services/api-keys.js';
import type { StreamHub } from '../../services/realtime/stream-hub.js';
import { assertMember, resolveScope } from '../../services/standings-service.js';
import { topStreamQuerySchema } from '../../services/realtime/stream-query.js';
import { parseOrThrow } from '../../domain/validation.js';
import { openEventStream } from '../event-stream.js';
import { param } from '../params.js';
import { requireRole } from '../auth.js';

/**
 * SPEC §9.5 streams. Registered before the standings routes, so that `/standings/stream`
 * is the top stream and not the standing of a member called "stream". Scope errors answer
 * as JSON before the stream starts.
 */
export function streamRoutes(ctx: AppContext, verifier: ApiKeyVerifier, hub: StreamHub): Router {
  const router = Router();
  const read = requireRole(verifier, 'read', { publicReads: ctx.env.PUBLIC_READS });

  router.get('/v1/boards/:boardId/standings/stream', read, async (req, res) => {
    const { limit } = parseOrThrow(topStreamQuerySchema, req.query, 'query');
    const scope = await resolveScope(ctx, param(req, 'boardId'), req.query);
    let leave: (() => void) | null = null;
    const sink = openEventStream(req, res, () => leave?.());
    leave = await hub.open(scope, { kind: 'top', limit }, sink);
    if (res.destroyed) leave();
  });
  router.get('/v1/boards/:boardId/standings/:memberId/stream', read, async (req, res) => {
    const member = param(req, 'memberId');
    assertMember(member);
    const scope = await resolveScope(ctx, param(req, 'boardId'), req.query);
    let leave: (() => void) | null = null;
    const sink = openEventStream(req, res, () => leave?.());
    leave = await hub.open(scope, { kind: 'member', member }, sink);
    if (res.destroyed) leave();
  });
  return router;
}
