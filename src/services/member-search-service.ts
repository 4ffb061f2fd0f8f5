import { z } from 'zod';
import type { AppContext } from '../context.js';
import { isSafeText, UNSAFE_TEXT_MESSAGE } from '../domain/ids.js';
import { parseOrThrow } from '../domain/validation.js';
import { findMembersByPrefix } from '../storage/postgres/member-search-repository.js';

export const memberSearchQuerySchema = z.object({
  q: z.string().min(1).max(64).refine(isSafeText, UNSAFE_TEXT_MESSAGE).meta({
    description:
      'the start of a member id (exact case) or of a display name (any case); `%`, `_` and `\\` are plain characters',
  }),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/**
 * GET /v1/members?q= (admin): members whose id starts with `q`, in id byte order, then those
 * whose display name starts with it in any case, by name, each member once, at most `limit`.
 */
export async function searchMembers(ctx: AppContext, query: Record<string, unknown>) {
  const { q, limit } = parseOrThrow(memberSearchQuerySchema, query, 'query');
  const found = await findMembersByPrefix(ctx.db, q, limit);
  return {
    members: found.map((m) => ({ id: m.id, displayName: m.displayName, region: m.region, excluded: m.excluded })),
  };
}
