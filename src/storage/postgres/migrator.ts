import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { createPostgres } from './database.js';
import { installStoredFunctions } from './function-installer.js';
import { LEDGER_MONTHS_AHEAD } from './ledger-partitions.js';
import type { Database } from './schema.js';

/** migrations/ sits at the project root, both in the sources and in dist/. */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../migrations');

/** The migration files: .ts in the sources, .js in dist/ (declaration and map files are not). */
// The folder ships with the code and never changes under a running process: listed once
// (readiness asks for pending migrations until they are current).
let files: Promise<string[]> | undefined;
function migrationFiles(): Promise<string[]> {
  return (files ??= fs
    .readdir(MIGRATIONS_DIR)
    .then((all) => all.filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts')).sort()));
}

/**
 * Loads each migration with a plain dynamic import of its file URL, which tsx, node (dist/)
 * and vitest all resolve (Kysely's FileMigrationProvider imports a bare path, which vitest does not).
 */
const provider: MigrationProvider = {
  async getMigrations() {
    const migrations: Record<string, Migration> = {};
    for (const file of await migrationFiles()) {
      migrations[file.replace(/\.(ts|js)$/, '')] = (await import(
        pathToFileURL(path.join(MIGRATIONS_DIR, file)).href
      )) as Migration;
    }
    return migrations;
  },
};

/** Migrates the database at `url` with a connection of its own (release phase, CLI). */
export async function migrateDatabase(url: string): Promise<MigrationReport> {
  const { db } = createPostgres(url, { max: 1, applicationName: 'laurel-migrate' });
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

export interface MigrationReport {
  /** Migrations applied now. */
  migrations: string[];
  /** Stored functions created or replaced now (their definition changed). */
  functions: string[];
}

/**
 * Brings the database to this code's schema in one transaction: the pending migrations
 * (tables, types, indexes, data), then every stored function whose definition changed, then
 * the ledger partitions of this month and the next ones. A transaction-level advisory lock
 * makes a second process that migrates at the same time wait, then find nothing to do.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationReport> {
  return db.connection().execute(async (conn) => {
    await sql`BEGIN`.execute(conn);
    try {
      await sql`SELECT pg_advisory_xact_lock(hashtext('laurel_migrate'))`.execute(conn);
      const migrator = new Migrator({ db: conn, provider, disableTransactions: true });
      const { error, results } = await migrator.migrateToLatest();
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- Kysely types the failure unknown; whatever it is, its text is the message
      if (error) throw error instanceof Error ? error : new Error(String(error));
      const functions = await installStoredFunctions(conn);
      await sql`
        SELECT laurel_ensure_ledger_partition(m::date)
          FROM generate_series(date_trunc('month', now() AT TIME ZONE 'UTC'),
                               date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => ${LEDGER_MONTHS_AHEAD}),
                               interval '1 month') AS m`.execute(conn);
      await sql`COMMIT`.execute(conn);
      return {
        migrations: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
        functions,
      };
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

/**
 * Names of migrations that exist in the code but are not applied to the database. Read
 * from the folder and Kysely's bookkeeping table, without loading the migration modules.
 */
export async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  const names = [...new Set((await migrationFiles()).map((f) => f.replace(/\.(ts|js)$/, '')))].sort();
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`
    .execute(db)
    .catch(() => ({ rows: [] }));
  const applied = new Set(rows.map((r) => r.name));
  return names.filter((n) => !applied.has(n));
}

/** One line for the operator (npm run migrate, laurel migrate). */
export function describeMigration(report: MigrationReport): string {
  const parts = [
    ...(report.migrations.length ? [`applied: ${report.migrations.join(', ')}`] : []),
    ...(report.functions.length ? [`functions installed: ${report.functions.join(', ')}`] : []),
  ];
  return parts.length ? parts.join('; ') : 'database is up to date';
}
