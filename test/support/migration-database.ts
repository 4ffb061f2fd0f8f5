import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Migrator, type Kysely, type Migration } from 'kysely';
import { afterAll, beforeAll, expect } from 'vitest';
import { createPostgres } from '../../src/storage/postgres/database.js';
import { MIGRATIONS_DIR } from '../../src/storage/postgres/migrator.js';
import type { Database } from '../../src/storage/postgres/schema.js';
import { databaseUrl, dropDatabase, withAdminClient } from './databases.js';

/**
 * An empty database of the test's own for one describe block, created before it and dropped
 * after: a migration's test fills it as an earlier release left it, then migrates.
 */
export function scratchDatabase(prefix: string): () => Kysely<Database> {
  const name = `laurel_${prefix}_${process.pid}_${randomBytes(3).toString('hex')}`;
  let db: Kysely<Database> | undefined;
  beforeAll(async () => {
    await withAdminClient((c) => c.query(`CREATE DATABASE "${name}"`));
    db = createPostgres(databaseUrl(name), { max: 1 }).db;
  });
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(name);
  });
  return () => db!;
}

/** The migrations that come before `migration` (by name), applied as the release before it did. */
export async function migrateBefore(db: Kysely<Database>, migration: string): Promise<void> {
  const migrations: Record<string, Migration> = {};
  for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.ts') && f < migration)) {
    migrations[file.replace(/\.ts$/, '')] = (await import(
      pathToFileURL(path.join(MIGRATIONS_DIR, file)).href
    )) as Migration;
  }
  const before = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  expect((await before.migrateToLatest()).error).toBeUndefined();
}

/** The names of the migrations from `migration` on, as migrateToLatest reports them. */
export function migrationsFrom(migration: string): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.ts') && f >= migration)
    .map((f) => f.replace(/\.ts$/, ''));
}
