import type { IRouter, Request, Response } from 'express';
import type { AppContext } from '../../context.js';
import type { StreamHub, StreamSpec } from '../../services/realtime/stream-hub.js';
import { topStreamQuerySchema } from '../../services/realtime/stream-query.js';
import { assertMember, resolveScope } from '../../services/standings-service.js';
import { parseOrThrow } from '../../domain/validation.js';
import { setReadHeaders } from '../answer-headers.js';
import { principalOf, requireRole } from '../auth.js';
import { openEventStream } from '../event-stream.js';
import { param } from '../params.js';
import type { StreamAdmission } from '../stream-admission.js';

/**
 * The event streams of a board's standings: a member's place, and the top of the board.
 * The app mounts them before compression and body parsing, which a stream never needs: a
 * stream lives as long as its client, and whatever a middleware wraps its response in would
 * stay in memory with each of thousands of them (and compression would hold messages back).
 */
export function streamRoutes(router: IRouter, ctx: AppContext, hub: StreamHub, admission: StreamAdmission): void {
  const read = requireRole('read', { publicReads: ctx.env.PUBLIC_READS });
  const serve = async (req: Request, res: Response, spec: StreamSpec) => {
    const scope = await resolveScope(ctx, param(req, 'boardId'), req.query);
    setReadHeaders(res, 'none', ctx.env.CORS_ORIGINS);
    if (req.method === 'HEAD') return void openEventStream(req, res, () => {}).end();
    // The place is taken before the stream opens and given back when its connection closes,
    // however the stream ends.
    const release = admission.admit(principalOf(res), req.ip);
    let leave: (() => void) | null = null;
    const sink = openEventStream(req, res, () => {
      release();
      leave?.();
    });
    leave = await hub.open(scope, spec, sink);
    if (res.destroyed) {
      release();
      leave();
    }
  };
  // Before the member stream, which would take `stream` for a member id.
  router.get('/v1/boards/:boardId/standings/stream', read, async (req, res) => {
    await serve(req, res, { kind: 'top', limit: parseOrThrow(topStreamQuerySchema, req.query, 'query').limit });
  });
  router.get('/v1/boards/:boardId/standings/:memberId/stream', read, async (req, res) => {
    const member = param(req, 'memberId');
    assertMember(member);
    await serve(req, res, { kind: 'member', member });
  });
}
