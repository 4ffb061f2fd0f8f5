import type { Db } from './database.js';

/**
 * What a key may do: `read` the standings, `ingest` scores and members, scrape `metrics`
 * (nothing else, so a Prometheus server holds no more than that), or everything (`admin`).
 */
export const ROLES = ['ingest', 'read', 'metrics', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiKeyRecord {
  id: string;
  name: string;
  role: Role;
  createdAt: Date;
  revokedAt: Date | null;
}

export async function insertApiKey(db: Db, key: { name: string; role: Role; keyHash: string }): Promise<ApiKeyRecord> {
  const row = await db
    .insertInto('api_keys')
    .values({ name: key.name, role: key.role, key_hash: key.keyHash })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { id: row.id, name: row.name, role: row.role, createdAt: row.created_at, revokedAt: row.revoked_at };
}

/** The active key with this hash, if any. */
export async function findActiveKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { id: row.id, name: row.name, role: row.role, createdAt: row.created_at, revokedAt: row.revoked_at };
}

/** Every key, revoked ones too, oldest first: what a key is, never the key or its hash. */
export async function listApiKeys(db: Db): Promise<ApiKeyRecord[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'name', 'role', 'created_at', 'revoked_at'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    role: row.role,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  }));
}

/** Revokes a key; false when no active key has this id. */
export async function revokeApiKey(db: Db, id: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
