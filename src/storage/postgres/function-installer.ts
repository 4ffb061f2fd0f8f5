import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { STORED_FUNCTIONS, type StoredFunction } from './functions/index.js';

/**
 * Stored functions are installed by definition, not by migration: each one's text lives in
 * one file under functions/, and laurel_functions records the hash of the text installed.
 */

export function definitionHash(fn: StoredFunction): string {
  return createHash('sha256').update(fn.definition).digest('hex');
}

/**
 * Creates or replaces every function whose recorded hash differs from its definition's;
 * returns their names. The caller runs it inside the migration transaction, under its lock,
 * so two processes migrating at once install each definition once.
 */
export async function installStoredFunctions(db: Kysely<Database>, functions: readonly StoredFunction[] = STORED_FUNCTIONS): Promise<string[]> {
  const recorded = new Map((await db.selectFrom('laurel_functions').select(['name', 'hash']).execute()).map((r) => [r.name, r.hash]));
  const installed: string[] = [];
  for (const fn of functions) {
    const hash = definitionHash(fn);
    if (recorded.get(fn.name) === hash) continue;
    await sql.raw(fn.definition).execute(db);
    await db
      .insertInto('laurel_functions')
      .values({ name: fn.name, hash })
      .onConflict((oc) => oc.column('name').doUpdateSet({ hash, installed_at: new Date() }))
      .execute();
    installed.push(fn.name);
  }
  return installed;
}

export interface FunctionDrift {
  name: string;
  /** missing: never installed; differs: the database runs another definition than this code's. */
  state: 'missing' | 'differs';
}

/** The code's functions whose definition the database does not have (empty: in step). */
export async function storedFunctionDrift(db: Kysely<Database>, functions: readonly StoredFunction[] = STORED_FUNCTIONS): Promise<FunctionDrift[]> {
  const recorded = new Map((await db.selectFrom('laurel_functions').select(['name', 'hash']).execute()).map((r) => [r.name, r.hash]));
  return functions.flatMap((fn): FunctionDrift[] => {
    const hash = recorded.get(fn.name);
    if (hash === undefined) return [{ name: fn.name, state: 'missing' }];
    return hash === definitionHash(fn) ? [] : [{ name: fn.name, state: 'differs' }];
  });
}
