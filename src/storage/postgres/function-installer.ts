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

/** Per function name, its installed hashes, the current (last installed) first. */
async function installedHashes(db: Kysely<Database>): Promise<Map<string, string[]>> {
  const rows = await db.selectFrom('laurel_functions').select(['name', 'hash']).orderBy('installed_at', 'desc').execute();
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.name, [...(out.get(r.name) ?? []), r.hash]);
  return out;
}

/**
 * Creates or replaces every function whose current hash is not its definition's; returns
 * their names. The caller runs it inside the migration transaction, under its lock, so two
 * processes migrating at once install each definition once.
 */
export async function installStoredFunctions(db: Kysely<Database>, functions: readonly StoredFunction[] = STORED_FUNCTIONS): Promise<string[]> {
  const installed = await installedHashes(db);
  const changed: string[] = [];
  for (const fn of functions) {
    const hash = definitionHash(fn);
    if (installed.get(fn.name)?.[0] === hash) continue;
    await sql.raw(fn.definition).execute(db);
    // clock_timestamp, not now(): one transaction may install a definition back and forth.
    await db
      .insertInto('laurel_functions')
      .values({ name: fn.name, hash, installed_at: sql<Date>`clock_timestamp()` })
      .onConflict((oc) => oc.columns(['name', 'hash']).doUpdateSet({ installed_at: sql<Date>`clock_timestamp()` }))
      .execute();
    changed.push(fn.name);
  }
  return changed;
}

export interface FunctionDrift {
  name: string;
  /**
   * missing: never installed. outdated: the database runs a definition this code has never
   * installed (this code is newer: migrate). superseded: this code's definition was
   * installed once and a later one replaced it (this process is of the previous release,
   * still running during a rolling deploy; the newer definition stays compatible with it).
   */
  state: 'missing' | 'outdated' | 'superseded';
}

/** The code's functions whose current definition in the database is not the code's. */
export async function storedFunctionDrift(db: Kysely<Database>, functions: readonly StoredFunction[] = STORED_FUNCTIONS): Promise<FunctionDrift[]> {
  const installed = await installedHashes(db);
  return functions.flatMap((fn): FunctionDrift[] => {
    const hashes = installed.get(fn.name) ?? [];
    const hash = definitionHash(fn);
    if (hashes.length === 0) return [{ name: fn.name, state: 'missing' }];
    if (hashes[0] === hash) return [];
    return [{ name: fn.name, state: hashes.includes(hash) ? 'superseded' : 'outdated' }];
  });
}
