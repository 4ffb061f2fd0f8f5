import { sql } from 'kysely';
import type { Db } from './database.js';

export interface FoundMember {
  id: string;
  displayName: string | null;
  region: string | null;
  excluded: boolean;
}

/** A LIKE pattern matching what starts with `text`, taken literally: `\`, `%` and `_` are escaped. */
export function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Members whose id starts with `q` (in id byte order), then those whose display name starts
 * with `q` whatever its case (by lower-cased name in byte order, then id), each member once,
 * at most `limit` in all. Each part is a range of an index read in the answer's order: the id
 * prefix on the primary key (COLLATE "C"), the name prefix on members_display_name_prefix_idx.
 * The names are read only for the places the ids left, past the members found by id (so at
 * most 2 × `limit` entries in all). An erased member has no row left: nothing finds it.
 */
export async function findMembersByPrefix(db: Db, q: string, limit: number): Promise<FoundMember[]> {
  const pattern = likePrefix(q);
  const { rows } = await sql<{ id: string; display_name: string | null; region: string | null; excluded: boolean }>`
    WITH by_id AS MATERIALIZED (
      SELECT m.id, m.display_name, m.region, m.excluded_at IS NOT NULL AS excluded, 0 AS part, m.id AS sort_key
        FROM members m
       WHERE m.id LIKE ${pattern} ESCAPE '\\'
       ORDER BY m.id
       LIMIT ${limit}
    ), by_name AS (
      SELECT m.id, m.display_name, m.region, m.excluded_at IS NOT NULL AS excluded, 1 AS part,
             lower(m.display_name) COLLATE "C" AS sort_key
        FROM members m
       WHERE m.display_name IS NOT NULL
         AND lower(m.display_name) COLLATE "C" LIKE lower(${pattern}) ESCAPE '\\'
         AND m.id NOT IN (SELECT b.id FROM by_id b)
       ORDER BY lower(m.display_name) COLLATE "C", m.id
       LIMIT greatest(${limit} - (SELECT count(*) FROM by_id), 0)
    )
    SELECT f.id, f.display_name, f.region, f.excluded
      FROM (SELECT * FROM by_id UNION ALL SELECT * FROM by_name) f
     ORDER BY f.part, f.sort_key, f.id`.execute(db);
  return rows.map((r) => ({ id: r.id, displayName: r.display_name, region: r.region, excluded: r.excluded }));
}
