import type { AppContext } from '../context.js';
import {
  lockMember,
  membersProjection,
  moveOpenAggregates,
  updateMember,
  type MemberRow,
} from '../storage/postgres/moderation-repository.js';
import { replaceFollowing } from '../storage/postgres/members-repository.js';
import { project, queueReprojections } from './member-projection.js';

/** A member's profile fields as a request sets them: omitted = unchanged, null = cleared. */
export interface ProfileChanges {
  displayName?: string | null | undefined;
  region?: string | null | undefined;
}

/** One member's update, already validated: its profile (when set at all), its follow list (when given). */
export interface MemberUpdate {
  id: string;
  profile?: ProfileChanges;
  following?: readonly string[];
}

/** Whom a follow list names: duplicates collapse, the member itself is ignored. */
export function followedBy(memberId: string, memberIds: readonly string[]): string[] {
  return [...new Set(memberIds)].filter((id) => id !== memberId);
}

/**
 * The one write path of member profiles and follow lists: a single route applies one update,
 * `PUT /v1/members` up to a thousand, with the same effect member by member, in one
 * transaction. A region change moves the member's entries of open periods to the new
 * region's scopes with the member locked, so the member is never in two regions or in none.
 *
 * Updates are applied in member id order (stably: a member named twice gets both, in the
 * order given), so two batches lock their members in one order and never deadlock. Returns
 * each profiled member's row as it now stands.
 */
export async function applyMemberUpdates(
  ctx: AppContext,
  updates: readonly MemberUpdate[],
): Promise<Map<string, MemberRow>> {
  const ordered = [...updates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const profiled = await ctx.db.transaction().execute(async (trx) => {
    const rows = new Map<string, MemberRow>();
    const moved = new Set<string>();
    for (const { id, profile, following } of ordered) {
      if (profile) {
        const current = (await lockMember(trx, id, true))!;
        await updateMember(trx, id, profile);
        if (profile.region !== undefined && profile.region !== current.region) {
          await moveOpenAggregates(trx, id, profile.region);
          moved.add(id);
        }
        rows.set(id, { ...current, ...definedOnly(profile) });
      }
      if (following) await replaceFollowing(trx, id, followedBy(id, following));
    }
    // Queued before the commit (see queueReprojection): a process dying between the commit
    // and the projection below still leaves Redis to be brought level.
    await queueReprojections(ctx, [...moved], true);
    return rows;
  });
  await ctx.members.changedAll([...new Set(updates.map((u) => u.id))]);
  if (profiled.size > 0) await project(ctx, await membersProjection(ctx.db, [...profiled.keys()], { openOnly: true }));
  return profiled;
}

/** The fields a request set (an omitted one leaves the stored value). */
function definedOnly(profile: ProfileChanges): Partial<MemberRow> {
  return Object.fromEntries(Object.entries(profile).filter(([, v]) => v !== undefined));
}
