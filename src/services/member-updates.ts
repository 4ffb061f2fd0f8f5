import type { AppContext } from '../context.js';
import {
  lockAndUpdateMembers,
  membersProjection,
  moveOpenAggregates,
  type MemberRow,
  type ProfileWrite,
} from '../storage/postgres/moderation-repository.js';
import { replaceFollowing } from '../storage/postgres/members-repository.js';
import { project, queueReprojections } from './member-projection.js';
import { Contention } from '../domain/errors.js';
import { asDomainError } from '../storage/postgres/pg-errors.js';

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
 * `PUT /v1/members` up to a thousand, in one transaction and a fixed number of statements
 * whatever the batch's size. A member named twice ends as if its updates ran in the order
 * given: a later field, or a later follow list, replaces an earlier one. A region change
 * moves the member's entries of open periods to the new region's scopes with the member
 * locked, so the member is never in two regions or in none. Returns each profiled member's
 * row as it now stands.
 */
export async function applyMemberUpdates(
  ctx: AppContext,
  updates: readonly MemberUpdate[],
): Promise<Map<string, MemberRow>> {
  const profiles = new Map<string, ProfileWrite>();
  const lists = new Map<string, string[]>();
  for (const { id, profile, following } of updates) {
    if (profile) profiles.set(id, { ...profiles.get(id), ...definedOnly(profile), id });
    if (following) lists.set(id, followedBy(id, following));
  }
  const profiled = await writeMembers(ctx, profiles, lists).catch((err: unknown) => {
    // A wait Postgres gave up (lock or statement timeout, deadlock, cancel) in any statement
    // of the batch: the whole transaction is undone and the request may be sent again.
    throw asDomainError(err);
  });
  await ctx.members.changedAll([...new Set(updates.map((u) => u.id))]);
  if (profiled.size > 0) await project(ctx, await membersProjection(ctx.db, [...profiled.keys()], { openOnly: true }));
  return profiled;
}

/** The batch's one transaction: profiles, region moves and follow lists. */
async function writeMembers(
  ctx: AppContext,
  profiles: ReadonlyMap<string, ProfileWrite>,
  lists: ReadonlyMap<string, string[]>,
): Promise<Map<string, MemberRow>> {
  return ctx.db.transaction().execute(async (trx) => {
    const before = await lockAndUpdateMembers(trx, [...profiles.values()]);
    const rows = new Map<string, MemberRow>();
    const moves: Array<{ id: string; region: string | null }> = [];
    for (const write of profiles.values()) {
      const current = before.get(write.id);
      // Created by this batch, then erased before it locked the row: nothing to update.
      if (!current) throw new Contention(`member "${write.id}" was erased during the update; send it again`);
      if (write.region !== undefined && write.region !== current.region)
        moves.push({ id: write.id, region: write.region });
      rows.set(write.id, { ...current, ...definedOnly(write) });
    }
    await moveOpenAggregates(trx, moves);
    await replaceFollowing(
      trx,
      [...lists].map(([memberId, followed]) => ({ memberId, followed })),
    );
    // Queued before the commit (see queueReprojection): a process dying between the commit
    // and the projection below still leaves Redis to be brought level.
    await queueReprojections(
      ctx,
      moves.map((m) => m.id),
      true,
    );
    return rows;
  });
}

/** The fields a request set (an omitted one leaves the stored value). */
function definedOnly<T extends object>(profile: T): Partial<T> {
  return Object.fromEntries(Object.entries(profile).filter(([, v]) => v !== undefined)) as Partial<T>;
}
