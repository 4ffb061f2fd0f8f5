import { z } from 'zod';
import type { AppContext } from '../context.js';
import { MEMBER_ID } from '../domain/ids.js';
import { assertMemberId } from './member-id.js';
import { applyMemberUpdates, followedBy } from './member-updates.js';
import { parseOrThrow } from '../domain/validation.js';

export const MAX_FOLLOWING = 1000;

export const followingSchema = z
  .object({
    memberIds: z
      .array(z.string().regex(MEMBER_ID, 'must match ^[A-Za-z0-9_.:@-]{1,128}$'))
      .max(MAX_FOLLOWING, `at most ${MAX_FOLLOWING} members`),
  })
  .strict();

/** Replaces whom a member follows: the members' write path (member-updates.ts) with one member. */
export async function putFollowing(ctx: AppContext, memberId: string, body: unknown) {
  assertMemberId(memberId);
  const { memberIds } = parseOrThrow(followingSchema, body, 'following list');
  await applyMemberUpdates(ctx, [{ id: memberId, following: memberIds }]);
  return { member: memberId, memberIds: followedBy(memberId, memberIds) };
}
