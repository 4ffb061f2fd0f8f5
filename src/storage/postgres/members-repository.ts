import { sql } from 'kysely';
import type { Db } from './database.js';

/** Display names of many members in one query (members without a name are left out). */
export async function displayNames(db: Db, memberIds: readonly string[]): Promise<Map<string, string>> {
  if (memberIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('members')
    .select(['id', 'display_name'])
    .where('id', 'in', [...new Set(memberIds)])
    .where('display_name', 'is not', null)
    .execute();
  return new Map(rows.map((r) => [r.id, r.display_name!]));
}

export async function followedBy(db: Db, memberId: string): Promise<string[]> {
  const rows = await db.selectFrom('member_follows').select('followed_id').where('member_id', '=', memberId).execute();
  return rows.map((r) => r.followed_id);
}

/**
 * Replaces the follow lists of several members in two statements; `trx` is the caller's
 * transaction, so no one sees a list half replaced. A member with an empty list follows no one.
 */
export async function replaceFollowing(
  trx: Db,
  lists: ReadonlyArray<{ memberId: string; followed: readonly string[] }>,
): Promise<void> {
  if (lists.length === 0) return;
  await trx
    .deleteFrom('member_follows')
    .where(
      'member_id',
      'in',
      lists.map((l) => l.memberId),
    )
    .execute();
  const pairs = lists.flatMap((l) => l.followed.map((followed_id) => ({ member_id: l.memberId, followed_id })));
  if (pairs.length > 0) {
    await sql`
      INSERT INTO member_follows (member_id, followed_id)
      SELECT * FROM unnest(${pairs.map((p) => p.member_id)}::text[], ${pairs.map((p) => p.followed_id)}::text[])`.execute(
      trx,
    );
  }
}
