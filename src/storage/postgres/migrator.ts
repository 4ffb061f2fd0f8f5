import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type Kysely } from 'kysely';

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

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations that exist in the code but are not applied to the database. */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const migrations = await createMigrator(db).getMigrations();
  return migrations.filter((m) => !m.executedAt).map((m) => m.name);
}
