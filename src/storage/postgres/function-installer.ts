import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { STORED_FUNCTIONS, type StoredFunction } from './functions/index.js';

/**
 * Stored functions are installed by definition, not by migration: each one's text lives in
 * one file under functions/, and laurel_functions records the hash of every text installed,
 * the last one being current.
 */

export function definitionHash(fn: StoredFunction): string {
  return createHash('sha256').update(fn.definition).digest('hex');
}

interface InstalledRow {
  hash: string;
  catalogHash: string | null;
}

/** Per function name, its installed rows, the current (last installed) first. */
async function installedHashes(db: Kysely<Database>): Promise<Map<string, InstalledRow[]>> {
  const rows = await db
    .selectFrom('laurel_functions')
    .select(['name', 'hash', 'catalog_hash'])
    .orderBy('installed_at', 'desc')
    .execute();
  const out = new Map<string, InstalledRow[]>();
  for (const r of rows) out.set(r.name, [...(out.get(r.name) ?? []), { hash: r.hash, catalogHash: r.catalog_hash }]);
  return out;
}

/**
 * Per function name, a hash of what Postgres holds for it now (every overload, as
 * pg_get_functiondef prints it): it changes when anyone replaces the body, Laurel or not.
 */
async function catalogHashes(db: Kysely<Database>, names: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await sql<{ name: string; hash: string }>`
    SELECT p.proname AS name,
           md5(string_agg(pg_get_functiondef(p.oid), E'\n' ORDER BY p.oid::regprocedure::text)) AS hash
      FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.proname = ANY(${names}::text[])
     GROUP BY p.proname`.execute(db);
  return new Map(rows.map((r) => [r.name, r.hash]));
}

/** The function's current row is this definition and Postgres still holds what was installed. */
function isCurrent(rows: readonly InstalledRow[] | undefined, hash: string, catalogHash: string | undefined): boolean {
  const current = rows?.[0];
  if (current?.hash !== hash) return false;
  // A row from before catalog hashes were recorded is trusted; the installer records one for it.
  return current.catalogHash === null || current.catalogHash === catalogHash;
}

/**
 * Creates or replaces every function whose current hash is not its definition's; returns
 * their names. The caller runs it inside the migration transaction, under its lock, so two
 * processes migrating at once install each definition once.
 */
export async function installStoredFunctions(
  db: Kysely<Database>,
  functions: readonly StoredFunction[] = STORED_FUNCTIONS,
): Promise<string[]> {
  const installed = await installedHashes(db);
  const before = await catalogHashes(
    db,
    functions.map((f) => f.name),
  );
  const changed: string[] = [];
  for (const fn of functions) {
    const hash = definitionHash(fn);
    const rows = installed.get(fn.name);
    if (isCurrent(rows, hash, before.get(fn.name))) {
      if (rows![0]!.catalogHash === null) await recordCatalogHash(db, fn.name, hash);
      continue;
    }
    await sql.raw(fn.definition).execute(db);
    // clock_timestamp, not now(): one transaction may install a definition back and forth.
    await db
      .insertInto('laurel_functions')
      .values({ name: fn.name, hash, installed_at: sql<Date>`clock_timestamp()` })
      .onConflict((oc) => oc.columns(['name', 'hash']).doUpdateSet({ installed_at: sql<Date>`clock_timestamp()` }))
      .execute();
    await recordCatalogHash(db, fn.name, hash);
    changed.push(fn.name);
  }
  return changed;
}

async function recordCatalogHash(db: Kysely<Database>, name: string, hash: string): Promise<void> {
  const now = (await catalogHashes(db, [name])).get(name) ?? null;
  await db
    .updateTable('laurel_functions')
    .set({ catalog_hash: now })
    .where('name', '=', name)
    .where('hash', '=', hash)
    .execute();
}

export interface FunctionDrift {
  name: string;
  /**
   * missing: never installed. outdated: the database runs a definition this code has never
   * installed (this code is newer: migrate). superseded: this code's definition was
   * installed once and a later one replaced it (this process is of the previous release,
   * still running during a rolling deploy; the newer definition stays compatible with it).
   * altered: the recorded definition is this code's, but the body Postgres holds is not
   * what was installed (replaced or dropped by hand; migrate installs it again).
   */
  state: 'missing' | 'outdated' | 'superseded' | 'altered';
}

/** The code's functions whose current definition in the database is not the code's. */
export async function storedFunctionDrift(
  db: Kysely<Database>,
  functions: readonly StoredFunction[] = STORED_FUNCTIONS,
): Promise<FunctionDrift[]> {
  const installed = await installedHashes(db);
  const catalog = await catalogHashes(
    db,
    functions.map((f) => f.name),
  );
  return functions.flatMap((fn): FunctionDrift[] => {
    const rows = installed.get(fn.name) ?? [];
    const hash = definitionHash(fn);
    if (rows.length === 0) return [{ name: fn.name, state: 'missing' }];
    if (rows[0]!.hash === hash)
      return isCurrent(rows, hash, catalog.get(fn.name)) ? [] : [{ name: fn.name, state: 'altered' }];
    return [{ name: fn.name, state: rows.some((r) => r.hash === hash) ? 'superseded' : 'outdated' }];
  });
}
