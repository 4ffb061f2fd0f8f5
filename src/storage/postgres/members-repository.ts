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
