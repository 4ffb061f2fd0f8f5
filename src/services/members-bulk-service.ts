import { z } from 'zod';
import type { AppContext } from '../context.js';
import { MEMBER_ID } from '../domain/ids.js';
import { InvalidInput, type ErrorDetail } from '../domain/errors.js';
import { parseOrThrow, zodDetails } from '../domain/validation.js';
import { followingSchema } from './following-service.js';
import { memberSchema } from './member-profile-service.js';
import { applyMemberUpdates } from './member-updates.js';

export const MAX_BULK_MEMBERS = 1000;

/** One member of a bulk update: the fields of PUT /v1/members/{id}, and the follow list of its /following. */
export const bulkMemberSchema = memberSchema
  .extend({
    id: z.string().regex(MEMBER_ID, 'must match ^[A-Za-z0-9_.:@-]{1,128}$'),
    following: followingSchema.shape.memberIds.optional(),
  })
  .strict();

export const bulkMembersSchema = z
  .object({
    members: z.array(bulkMemberSchema).min(1).max(MAX_BULK_MEMBERS, `at most ${MAX_BULK_MEMBERS} members`),
  })
  .strict();

/** The batch's envelope, checked before its members, so a problem of one member can name its index. */
const envelopeSchema = z
  .object({ members: z.array(z.unknown()).min(1).max(MAX_BULK_MEMBERS, `at most ${MAX_BULK_MEMBERS} members`) })
  .strict();

/**
 * Updates up to a thousand members at once: each has the effect of PUT /v1/members/{id} with
 * its displayName and region, then, with `following`, of PUT /v1/members/{id}/following,
 * all in one transaction. The whole batch is validated first; any problem refuses it all,
 * each problem naming its member's index, and nothing is written.
 */
export async function putMembers(ctx: AppContext, body: unknown): Promise<{ updated: number }> {
  const { members } = parseOrThrow(envelopeSchema, body, 'member batch');
  const details: ErrorDetail[] = [];
  const valid: Array<z.infer<typeof bulkMemberSchema>> = [];
  members.forEach((raw, index) => {
    const result = bulkMemberSchema.safeParse(raw);
    if (result.success) valid.push(result.data);
    else details.push(...zodDetails(result.error, index));
  });
  if (details.length > 0) throw new InvalidInput('invalid member batch', details);
  const updates = valid.map(({ id, following, ...profile }) => ({ id, profile, ...(following ? { following } : {}) }));
  await applyMemberUpdates(ctx, updates);
  return { updated: new Set(updates.map((u) => u.id)).size };
}
