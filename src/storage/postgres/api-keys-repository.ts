import type { Db } from './database.js';

export type Role = 'ingest' | 'read' | 'admin';

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
