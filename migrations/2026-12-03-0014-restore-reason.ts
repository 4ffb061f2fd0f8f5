import { sql, type Kysely } from 'kysely';

/**
 * A restore may give its reason, as an exclusion does; it is kept on the exclusion row it
 * ends, beside who restored and when. Null for a restore without one, and for restores
 * recorded before this.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE member_exclusions ADD COLUMN restore_reason text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE member_exclusions DROP COLUMN restore_reason`.execute(db);
}
