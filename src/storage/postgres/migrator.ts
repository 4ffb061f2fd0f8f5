import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, sql, type Kysely } from 'kysely';
import { createPostgres } from './database.js';

/** migrations/ sits at the project root, both in the sources and in dist/. */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../migrations');

class ScriptMigrationProvider extends FileMigrationProvider {
  constructor(folder: string) {
    // Only .ts (sources) or .js (built) files are migrations; declaration and map files are not.
    const filteredFs = {
      readdir: async (dir: string) =>
        (await fs.readdir(dir)).filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts')),
    };
    super({ fs: filteredFs, path, migrationFolder: folder });
  }
}

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: new ScriptMigrationProvider(MIGRATIONS_DIR) });
}

/** Migrates the database at `url` with a connection of its own (release phase, CLI). */
export async function migrateDatabase(url: string): Promise<string[]> {
  const { db } = createPostgres(url, { max: 1, applicationName: 'laurel-migrate' });
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Names of migrations that exist in the code but are not applied to the database. Read
 * from the folder and Kysely's bookkeeping table, without loading the migration modules.
 */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const names = await migrationNames();
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db).catch(() => ({ rows: [] }));
  const applied = new Set(rows.map((r) => r.name));
  return names.filter((n) => !applied.has(n));
}

// The folder ships with the code and never changes under a running process: listed once.
let names: Promise<string[]> | undefined;
function migrationNames(): Promise<string[]> {
  return (names ??= fs.readdir(MIGRATIONS_DIR).then((all) => {
    const files = all.filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'));
    return [...new Set(files.map((f) => f.replace(/\.(ts|js)$/, '')))].sort();
  }));
}
