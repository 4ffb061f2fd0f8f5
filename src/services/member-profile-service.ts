import { z } from 'zod';
import type { AppContext } from '../context.js';
import { isSafeText, REGION_CODE, UNSAFE_TEXT_MESSAGE, WORLD } from '../domain/ids.js';
import { exclusionHistory, findMember } from '../storage/postgres/moderation-repository.js';
import { assertMemberId } from './member-id.js';
import { applyMemberUpdates } from './member-updates.js';
import { NotFound } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';

export const memberSchema = z
  .object({
    displayName: z.string().min(1).max(100).refine(isSafeText, UNSAFE_TEXT_MESSAGE).nullable().optional(),
    region: z
      .string()
      .regex(REGION_CODE, 'must be an ISO 3166-1 alpha-2 code or match ^[A-Za-z0-9_-]{1,16}$')
      .refine((r) => r !== WORLD, '"world" is reserved')
      .nullable()
      .optional(),
  })
  .strict();

/** Sets display name and region: the members' write path (member-updates.ts) with one member. */
export async function putMember(ctx: AppContext, memberId: string, body: unknown) {
  assertMemberId(memberId);
  const profile = parseOrThrow(memberSchema, body, 'member');
  const rows = await applyMemberUpdates(ctx, [{ id: memberId, profile }]);
  return memberView(rows.get(memberId)!);
}

export function memberView(m: {
  id: string;
  displayName?: string | null;
  region?: string | null;
  excludedAt: Date | null;
}) {
  return {
    member: m.id,
    displayName: m.displayName ?? null,
    region: m.region ?? null,
    excluded: m.excludedAt !== null,
  };
}

/**
 * The profile; the exclusion history (reasons, who excluded) only for admins, and whether
 * the member is excluded only for callers with a key (with PUBLIC_READS, anyone on the
 * internet would otherwise see who was caught cheating).
 */
export async function memberProfile(
  ctx: AppContext,
  memberId: string,
  options: { admin: boolean; anonymous?: boolean },
) {
  assertMemberId(memberId);
  const member = await findMember(ctx.db, memberId);
  if (!member) throw new NotFound(`member "${memberId}" not found`);
  if (options.anonymous) {
    const { excluded: _excluded, ...publicView } = memberView(member);
    return publicView;
  }
  if (!options.admin) return memberView(member);
  const history = await exclusionHistory(ctx.db, memberId);
  return {
    ...memberView(member),
    exclusions: history.map((e) => ({
      reason: e.reason,
      excludedBy: e.excluded_by,
      excludedAt: e.excluded_at.toISOString(),
      restoredBy: e.restored_by,
      restoredAt: e.restored_at?.toISOString() ?? null,
      restoreReason: e.restore_reason,
    })),
  };
}
