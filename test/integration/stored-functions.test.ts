import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createHarness } from '../support/harness.js';
import { databaseUrl, dropDatabase, withAdminClient } from '../support/databases.js';
import { createPostgres } from '../../src/storage/postgres/database.js';
import { migrateToLatest } from '../../src/storage/postgres/migrator.js';
import { installStoredFunctions, storedFunctionDrift } from '../../src/storage/postgres/function-installer.js';
import type { Database } from '../../src/storage/postgres/schema.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FUNCTION_NAMES = [
  'laurel_aggregate_json',
  'laurel_apply_batch',
  'laurel_ensure_ledger_partition',
  'laurel_recompute_aggregates',
];

describe('migrating: tables by migration, stored functions by definition', () => {
  const name = `laurel_fn_${process.pid}_${randomBytes(3).toString('hex')}`;
  let a: Kysely<Database>;
  let b: Kysely<Database>;
  beforeAll(async () => {
    await withAdminClient((c) => c.query(`CREATE DATABASE "${name}"`));
    a = createPostgres(databaseUrl(name), { max: 1 }).db;
    b = createPostgres(databaseUrl(name), { max: 1 }).db;
  });
  afterAll(async () => {
    await a.destroy();
    await b.destroy();
    await dropDatabase(name);
  });

  it('lets two processes migrate an empty database at once: each step runs once', async () => {
    const [first, second] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
    const files = readdirSync(path.join(ROOT, 'migrations'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(files[0]).toBe('2026-12-02-0001-baseline');
    expect([...first.migrations, ...second.migrations]).toEqual(files);
    expect([...first.functions, ...second.functions].sort()).toEqual(FUNCTION_NAMES);
    const { rows } = await sql<{ proname: string }>`
      SELECT proname FROM pg_proc WHERE proname LIKE 'laurel\\_%' AND pronamespace = 'public'::regnamespace ORDER BY 1`.execute(
      a,
    );
    expect(rows.map((r) => r.proname)).toEqual(FUNCTION_NAMES);
    expect(await storedFunctionDrift(a)).toEqual([]);
    // This month's ledger partition is ready before any tick.
    const month = new Date().toISOString().slice(0, 7).replace('-', '_');
    const part = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_class WHERE relname = ${`score_events_p${month}`}`.execute(a);
    expect(part.rows[0]!.n).toBe(1);
  });

  it('tells a database behind this code from one ahead of it, and the next migration brings it in step', async () => {
    // Ahead: a later release installed another body of laurel_apply_batch (this one stays in the history).
    const { STORED_FUNCTIONS } = await import('../../src/storage/postgres/functions/index.js');
    const later = STORED_FUNCTIONS.map((f) =>
      f.name === 'laurel_apply_batch' ? { ...f, definition: `${f.definition}\n-- a later release` } : f,
    );
    expect(await installStoredFunctions(a, later)).toEqual(['laurel_apply_batch']);
    expect(await storedFunctionDrift(a, later)).toEqual([]);
    expect(await storedFunctionDrift(a)).toEqual([{ name: 'laurel_apply_batch', state: 'superseded' }]);
    // Behind: the database runs a body this code never installed, or none.
    await sql`UPDATE laurel_functions SET hash = 'another release' WHERE name = 'laurel_aggregate_json'`.execute(a);
    await sql`DELETE FROM laurel_functions WHERE name = 'laurel_recompute_aggregates'`.execute(a);
    expect(await storedFunctionDrift(a)).toEqual([
      { name: 'laurel_aggregate_json', state: 'outdated' },
      { name: 'laurel_recompute_aggregates', state: 'missing' },
      { name: 'laurel_apply_batch', state: 'superseded' },
    ]);
    // Migrating with this code (a rollback, for laurel_apply_batch) installs its definitions again.
    const again = await migrateToLatest(a);
    expect(again).toEqual({
      migrations: [],
      functions: ['laurel_aggregate_json', 'laurel_recompute_aggregates', 'laurel_apply_batch'],
    });
    expect(await storedFunctionDrift(a)).toEqual([]);
    const body = await sql<{
      src: string;
    }>`SELECT prosrc AS src FROM pg_proc WHERE proname = 'laurel_apply_batch'`.execute(a);
    expect(body.rows[0]!.src).not.toContain('a later release');
    expect(await migrateToLatest(a)).toEqual({ migrations: [], functions: [] });
  });

  it('notices a function changed by hand behind the recorded definition, and migrating puts it back', async () => {
    const fn = 'laurel_ensure_ledger_partition';
    const signature = async () =>
      (
        await sql<{
          sig: string;
          cost: number;
        }>`SELECT oid::regprocedure::text AS sig, procost AS cost FROM pg_proc WHERE proname = ${fn}`.execute(a)
      ).rows[0]!;
    const { sig, cost } = await signature();
    await sql.raw(`ALTER FUNCTION ${sig} COST ${cost + 17}`).execute(a);
    expect(await storedFunctionDrift(a)).toEqual([{ name: fn, state: 'altered' }]);
    expect(await migrateToLatest(a)).toEqual({ migrations: [], functions: [fn] });
    expect((await signature()).cost).toBe(cost);
    expect(await storedFunctionDrift(a)).toEqual([]);
  });
});

describe('/readyz', () => {
  it('fails the functions check while the database runs another definition', async () => {
    const h = await createHarness({ workers: false });
    try {
      expect((await h.api('GET', '/readyz', undefined, null)).body.checks.functions).toBe('ok');
      await sql`UPDATE laurel_functions SET hash = 'another release' WHERE name = 'laurel_apply_batch'`.execute(
        h.ctx.db,
      );
      // Readiness is evaluated at most once a second: ask until an evaluation after the change answers.
      let res = await h.api('GET', '/readyz', undefined, null);
      for (let i = 0; i < 50 && res.status === 200; i += 1) {
        await new Promise((r) => setTimeout(r, 100));
        res = await h.api('GET', '/readyz', undefined, null);
      }
      expect(res.status).toBe(503);
      expect(res.body.failing).toEqual(['functions']);
      // Probes are public: the part is named, the reason stays in the logs and `laurel verify`.
      expect(res.body.checks.functions).toBe('failing');
    } finally {
      await h.close();
    }
  });
});

describe('stored function definitions', () => {
  it('each live in one file under src/storage/postgres/functions/, and no migration defines one', () => {
    const dir = path.join(ROOT, 'src/storage/postgres/functions');
    const definedIn = new Map<string, string[]>();
    for (const file of readdirSync(dir)) {
      for (const m of readFileSync(path.join(dir, file), 'utf8').matchAll(/CREATE OR REPLACE FUNCTION (\w+)/g)) {
        definedIn.set(m[1]!, [...(definedIn.get(m[1]!) ?? []), file]);
      }
    }
    expect([...definedIn.keys()].sort()).toEqual(FUNCTION_NAMES);
    for (const files of definedIn.values()) expect(files).toHaveLength(1);
    for (const file of readdirSync(path.join(ROOT, 'migrations'))) {
      expect(readFileSync(path.join(ROOT, 'migrations', file), 'utf8')).not.toMatch(/CREATE (OR REPLACE )?FUNCTION/);
    }
  });
});
