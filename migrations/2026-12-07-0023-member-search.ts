import { sql, type Kysely } from 'kysely';

/**
 * Member search by prefix (GET /v1/members?q=). A display name is matched case-insensitively
 * as lower(display_name) in byte order: COLLATE "C" makes `LIKE 'abc%'` a range on this index
 * whatever the database's collation, and its order (then id) is the answer's, so a page is read
 * off the index without a sort. An id prefix needs no index of its own: the primary key is
 * COLLATE "C" and serves it the same way. Members without a name are left out of the index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE INDEX members_display_name_prefix_idx ON members ((lower(display_name)) COLLATE "C", id)
      WHERE display_name IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX members_display_name_prefix_idx`.execute(db);
}
