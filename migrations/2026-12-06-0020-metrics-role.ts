import { sql, type Kysely } from 'kysely';

/** Keys may have the `metrics` role: they read `GET /metrics` and nothing else. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      DROP CONSTRAINT api_keys_role_check,
      ADD CONSTRAINT api_keys_role_check CHECK (role IN ('ingest', 'read', 'metrics', 'admin'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // A metrics key cannot be kept under the older roles: it is revoked (kept for the audit
  // trail) and made a read key, which the older code reads as a key that cannot scrape.
  await sql`UPDATE api_keys SET role = 'read', revoked_at = coalesce(revoked_at, now()) WHERE role = 'metrics'`.execute(
    db,
  );
  await sql`
    ALTER TABLE api_keys
      DROP CONSTRAINT api_keys_role_check,
      ADD CONSTRAINT api_keys_role_check CHECK (role IN ('ingest', 'read', 'admin'))`.execute(db);
}
