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

/** Replaces the member's follow list; `trx` is the caller's transaction, so no one sees it half replaced. */
export async function replaceFollowing(trx: Db, memberId: string, followed: readonly string[]): Promise<void> {
  await trx.deleteFrom('member_follows').where('member_id', '=', memberId).execute();
  if (followed.length > 0) {
    await trx
      .insertInto('member_follows')
      .values(followed.map((followed_id) => ({ member_id: memberId, followed_id })))
      .execute();
  }
}
