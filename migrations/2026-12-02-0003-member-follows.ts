import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Followed ids need not be members yet (SPEC: unknown members allowed), so no foreign key.
  await sql`
    CREATE TABLE member_follows (
      member_id text COLLATE "C" NOT NULL,
      followed_id text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (member_id, followed_id)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE member_follows`.execute(db);
}
