import { sql, type Kysely } from 'kysely';

/**
 * Beside the hash of the definition Laurel installed, the hash of what Postgres then held for
 * that function (pg_get_functiondef), so a body replaced by hand is told from the installed
 * one. Null for rows installed before this column: the installer fills it in.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE laurel_functions ADD COLUMN catalog_hash text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE laurel_functions DROP COLUMN catalog_hash`.execute(db);
}
