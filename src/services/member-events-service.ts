import { z } from 'zod';
import type { AppContext } from '../context.js';
import { unscale } from '../domain/decimal.js';
import { InvalidInput, NotFound } from '../domain/errors.js';
import { BOARD_ID } from '../domain/ids.js';
import { parseOrThrow } from '../domain/validation.js';
import {
  memberEvents,
  type MemberEventRow,
  type MemberEventsPosition,
} from '../storage/postgres/member-events-repository.js';
import { assertMemberId } from './member-id.js';

export const memberEventsQuerySchema = z.object({
  board: z.string().regex(BOARD_ID).optional(),
  period: z.string().max(32).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional().meta({ description: 'the `nextCursor` of the previous page' }),
});

/** Opaque to clients: base64url of the last row's place in the order (time, key, kind, id). */
function encodeCursor(row: MemberEventRow): string {
  return Buffer.from(JSON.stringify([row.at_micros, row.idempotency_key, row.kind, row.id])).toString('base64url');
}

function decodeCursor(cursor: string): MemberEventsPosition {
  const bad = () => new InvalidInput('invalid query', [{ path: 'cursor', message: 'not a cursor this route gave' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const position = z
    .tuple([
      z.string().regex(/^-?\d{1,19}$/),
      z.string().min(1).max(128),
      z.union([z.literal(0), z.literal(1)]),
      z.string().regex(/^\d{1,19}$/),
    ])
    .safeParse(parsed);
  if (!position.success) throw bad();
  const [atMicros, key, kind, id] = position.data;
  return { atMicros, key, kind, id };
}

/** GET /v1/members/{id}/events (admin): the member's applied, voided and rejected events, newest first. */
export async function memberEventsPage(ctx: AppContext, memberId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(memberEventsQuerySchema, query, 'query');
  assertMemberId(memberId);
  const after = q.cursor === undefined ? null : decodeCursor(q.cursor);
  if (q.board !== undefined && !(await ctx.boards.get(q.board))) throw new NotFound(`board "${q.board}" not found`);
  // One more than asked tells whether a next page exists.
  const rows = await memberEvents(ctx.db, memberId, { board: q.board, period: q.period }, after, q.limit + 1);
  const page = rows.slice(0, q.limit);
  return {
    member: memberId,
    events: page.map((r) => ({
      idempotencyKey: r.idempotency_key,
      board: r.board_id,
      period: r.period_key,
      status: r.status,
      reason: r.reason,
      value:
        r.scaled !== null
          ? unscale(BigInt(r.scaled), r.decimals)
          : typeof r.posted_value === 'number'
            ? r.posted_value
            : null,
      occurredAt: r.occurred_at.toISOString(),
      receivedAt: r.received_at.toISOString(),
      source: r.source,
      metadata: r.metadata ?? null,
    })),
    nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1]!) : null,
  };
}
