import type { IRouter } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.js';
import { eventStatus } from '../../services/event-status.js';
import { param } from '../params.js';
import { principalOf, requireRole } from '../auth.js';
import { voidEvent } from '../../services/moderation-service.js';
import { acceptEvents, type Intake } from '../../services/intake-service.js';
import { parseOrThrow } from '../../domain/validation.js';
import { BOARD_ID } from '../../domain/ids.js';

export const intakeQuerySchema = z.object({
  wait: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: 'true: answer once applied (at most 5 s), with per-event results' }),
});

/** The event a key names: an event is (board, key); without a board, the one board holding the key. */
export const eventKeyQuerySchema = z.object({
  board: z.string().regex(BOARD_ID, 'must be a board id').optional().meta({
    description: "the event's board; without it, the one board holding the key (409 ambiguous_key if several)",
  }),
});

/** Intake (registered first: it is the route most requests go to), an event's status, and voids. */
export function eventRoutes(router: IRouter, ctx: AppContext, intake: Intake): void {
  const ingest = requireRole('ingest');

  router.post('/v1/events', ingest, async (req, res) => {
    const { wait } = parseOrThrow(intakeQuerySchema, req.query, 'query');
    const body: unknown = req.body;
    const answer = await acceptEvents(ctx, intake, body, { wait: wait === 'true' });
    // A single event has a status resource of its own; a batch has none.
    const single = body as { idempotencyKey?: unknown; board?: unknown } | undefined;
    if (answer.status === 202 && typeof single?.idempotencyKey === 'string' && typeof single.board === 'string')
      res.location(`/v1/events/${encodeURIComponent(single.idempotencyKey)}?board=${encodeURIComponent(single.board)}`);
    res.status(answer.status).json(answer.body);
  });

  router.post('/v1/events/:idempotencyKey/void', requireRole('admin'), async (req, res) => {
    const { board } = parseOrThrow(eventKeyQuerySchema, req.query, 'query');
    res.json(await voidEvent(ctx, param(req, 'idempotencyKey'), req.body, principalOf(res)!.name, { board }));
  });
  router.get('/v1/events/:idempotencyKey', ingest, async (req, res) => {
    const { board } = parseOrThrow(eventKeyQuerySchema, req.query, 'query');
    res.json(
      await eventStatus(ctx, param(req, 'idempotencyKey'), { admin: principalOf(res)?.role === 'admin', board }),
    );
  });
}
