import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import { z } from 'zod';
import {
  BOARD_ID,
  CATEGORY_ID,
  IDEMPOTENCY_KEY,
  MEMBER_ID,
  isSafeJson,
  jsonDepth,
  prototypeKeyIn,
  UNSAFE_TEXT_MESSAGE,
} from './ids.js';
import type { Board } from './board.js';
import { scaleNumber } from './decimal.js';

export const MAX_BATCH = 1000;
export const MAX_METADATA_BYTES = 2048;
export const MAX_METADATA_DEPTH = 16;
export const MAX_FUTURE_MS = 5 * 60 * 1000;
/** Events before this are refused: tie encoding needs a non-negative reached second. */
export const EARLIEST_OCCURRED_AT = new Date(Date.UTC(2000, 0, 1));

export const scoreEventSchema = z
  .object({
    board: z.string().regex(BOARD_ID, 'must match ^[a-z0-9][a-z0-9_-]{0,63}$'),
    member: z.string().regex(MEMBER_ID, 'must match ^[A-Za-z0-9_.:@-]{1,128}$'),
    value: z.number(),
    subscore: z
      .number()
      .optional()
      .meta({ description: "only on a board with a subscore; the board's decimals, within ±2^40 after scaling" }),
    idempotencyKey: z.string().regex(IDEMPOTENCY_KEY, 'must be 1-128 printable ASCII characters without spaces'),
    occurredAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone' }).optional(),
    category: z.string().regex(CATEGORY_ID, 'must match ^[A-Za-z0-9_-]{1,64}$').optional(),
    source: z
      .string()
      .regex(/^[\x20-\x7e]{1,128}$/, 'must be 1-128 printable ASCII characters')
      .optional(),
    // Checked before zod copies it: the copy would silently lose a `__proto__` key.
    metadata: z
      .unknown()
      .superRefine((metadata, check) => {
        const key = jsonDepth(metadata) > MAX_METADATA_DEPTH ? undefined : prototypeKeyIn(metadata);
        if (key) check.addIssue({ code: 'custom', message: `must not contain the key "${key}"`, fatal: true });
      })
      .pipe(
        z.record(z.string(), z.unknown()).superRefine((metadata, check) => {
          const problem = metadataProblem(metadata);
          if (problem) check.addIssue({ code: 'custom', message: problem });
        }),
      )
      .optional(),
  })
  .strict();

/** The batch form of a POST /v1/events body (intake splits it itself, to name each event's index). */
export const eventBatchSchema = z.object({ events: z.array(scoreEventSchema).min(1).max(MAX_BATCH) }).strict();

/** Why metadata is refused, if it is; depth is checked first, so nothing below can overflow the stack. */
function metadataProblem(metadata: Record<string, unknown>): string | undefined {
  if (jsonDepth(metadata) > MAX_METADATA_DEPTH) return `must nest at most ${MAX_METADATA_DEPTH} levels deep`;
  if (!isSafeJson(metadata)) return UNSAFE_TEXT_MESSAGE;
  if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES)
    return `must be at most ${MAX_METADATA_BYTES} bytes as JSON`;
  return undefined;
}

export type ScoreEventInput = z.infer<typeof scoreEventSchema>;

export interface FieldProblem {
  index?: number;
  path: string;
  message: string;
}

/**
 * Checks an event against its board (docs/api.md): board known, category known, value within
 * the board's decimals, range and min/max, a subscore only where the board has one and
 * within its decimals and range, occurredAt not in the future.
 */
export function checkAgainstBoard(event: ScoreEventInput, board: Board | undefined, now: Date): FieldProblem[] {
  if (!board) return [{ path: 'board', message: `unknown board "${event.board}"` }];
  const problems: FieldProblem[] = [];
  if (event.category !== undefined && !board.categories.includes(event.category)) {
    problems.push({ path: 'category', message: `unknown category "${event.category}" for board "${board.id}"` });
  }
  const scaled = scaleNumber(event.value, board.decimals);
  if (!scaled.ok) {
    problems.push({ path: 'value', message: scaled.reason });
  } else {
    if (board.minValue !== null && event.value < board.minValue) {
      problems.push({ path: 'value', message: `must be at least ${board.minValue}` });
    }
    if (board.maxValue !== null && event.value > board.maxValue) {
      problems.push({ path: 'value', message: `must be at most ${board.maxValue}` });
    }
  }
  if (event.subscore !== undefined) {
    const subscore = scaleNumber(event.subscore, board.decimals);
    if (!board.subscore) problems.push({ path: 'subscore', message: `board "${board.id}" has no subscore` });
    else if (!subscore.ok) problems.push({ path: 'subscore', message: subscore.reason });
  }
  if (event.occurredAt !== undefined) {
    const at = new Date(event.occurredAt);
    if (at.getTime() > now.getTime() + MAX_FUTURE_MS) {
      problems.push({ path: 'occurredAt', message: 'must not be more than 5 minutes in the future' });
    } else if (at < EARLIEST_OCCURRED_AT) {
      problems.push({ path: 'occurredAt', message: 'must not be before 2000-01-01' });
    }
  }
  return problems;
}

/**
 * Hash of the event as posted (no defaults filled in), so that a client retrying the same
 * request is a duplicate and a different event under the same key is a conflict.
 */
export function payloadHash(event: ScoreEventInput): string {
  return createHash('sha256')
    .update(stringify(event) ?? '')
    .digest('hex');
}
