import { z } from 'zod';
import type { AppContext } from '../context.js';
import { unscale } from '../domain/decimal.js';
import { PERCENT_DECIMALS, percentFraction, positionOfFraction, type Fraction } from '../domain/cutoffs.js';
import { parseOrThrow } from '../domain/validation.js';
import { readerOf } from './standings/reader.js';
import { resolveParsedScope, scopeQuerySchema } from './standings-service.js';

export const MAX_CUTOFFS = 20;

/**
 * `a,b,c`: 1-20 values, each read by `item` (null when it is at fault, named by its index).
 * One transform over the whole list: a zod schema per item cost more than the read it asks for.
 */
function listOf<T>(item: (text: string) => T | null, message: string) {
  return z.string().transform((text, ctx) => {
    const parts = text.split(',');
    if (parts.length > MAX_CUTOFFS) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_CUTOFFS} values` });
      return z.NEVER;
    }
    const values: T[] = [];
    parts.forEach((part, i) => {
      const value = item(part);
      if (value === null) ctx.addIssue({ code: 'custom', path: [i], message });
      else values.push(value);
    });
    return values.length === parts.length ? values : z.NEVER;
  });
}

/** Ranks as deep as a standings page reaches (its offset's bound). */
export const MAX_CUTOFF_RANK = 10_000_001;

const RANK_TEXT = /^[1-9]\d{0,7}$/;

function rankItem(text: string): number | null {
  if (!RANK_TEXT.test(text)) return null;
  const rank = Number(text);
  return rank <= MAX_CUTOFF_RANK ? rank : null;
}

function percentItem(text: string): { percent: number; fraction: Fraction } | null {
  const fraction = percentFraction(text);
  return fraction === null ? null : { percent: Number(text), fraction };
}

export const cutoffsQuerySchema = scopeQuerySchema
  .omit({ metadata: true })
  .extend({
    ranks: listOf(rankItem, `must be an integer from 1 to ${MAX_CUTOFF_RANK}`)
      .optional()
      .meta({
        description: `comma-separated positions (1-${MAX_CUTOFFS} integers from 1 to ${MAX_CUTOFF_RANK}), e.g. 1,10,100`,
      }),
    percents: listOf(percentItem, `must be a number in (0, 100] with at most ${PERCENT_DECIMALS} decimals`)
      .optional()
      .meta({ description: `comma-separated percents (1-${MAX_CUTOFFS} numbers in (0, 100]), e.g. 1,10,50` }),
  })
  .superRefine((q, issues) => {
    if (q.ranks === undefined && q.percents === undefined)
      issues.addIssue({ code: 'custom', path: ['ranks'], message: 'give ranks, percents or both' });
  });

/**
 * GET /v1/boards/{id}/cutoffs: the score at given positions of the listing order, and at the
 * position that is the top p% of the scope (shared ranks aside: positions). One targets
 * read, one Redis round trip, whatever the number of values.
 */
export async function scopeCutoffs(ctx: AppContext, boardId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(cutoffsQuerySchema, query, 'query');
  const scope = await resolveParsedScope(ctx, boardId, q);
  const ranks = q.ranks ?? [];
  const percents = q.percents ?? [];
  const read = scope.periodStored
    ? await readerOf(scope).targets(ctx, scope, {
        member: null,
        positions: ranks,
        fractions: percents.map((p) => p.fraction),
        members: [],
      })
    : {
        source: 'cache' as const,
        total: 0,
        positions: ranks.map(() => null),
        fractions: percents.map((p) => ({ position: positionOfFraction(0, p.fraction), entry: null })),
      };
  const scoreOf = (entry: { scaled: number } | null) =>
    entry === null ? null : unscale(entry.scaled, scope.board.decimals);
  return {
    board: scope.board.id,
    period: scope.view,
    category: scope.category,
    region: scope.region,
    total: read.total,
    source: read.source,
    ranks: ranks.map((rank, i) => ({ rank, score: scoreOf(read.positions[i]!) })),
    percents: percents.map((p, i) => {
      const { position, entry } = read.fractions[i]!;
      return { percent: p.percent, rank: position, score: scoreOf(entry) };
    }),
  };
}
