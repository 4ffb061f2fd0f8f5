import path from 'node:path';
import { randomBytes } from 'node:crypto';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { cloneTemplate, databaseUrl, dropDatabase } from '../support/databases.js';
import { createPostgres } from '../../src/storage/postgres/database.js';

/**
 * src/storage/postgres/schema.ts against the migrated database: the same tables, the same
 * columns, the same nullability, and a TypeScript type that is what pg returns for the
 * column's SQL type. The types are read with the TypeScript compiler (Kysely's Selectable of
 * each table), the database with information_schema, and the two compared through the map
 * below, written here independently of both.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What node-postgres hands back for each SQL type, with int8 read as a number (database.ts). */
const TS_TYPE_OF_SQL: Record<string, string> = {
  text: 'string',
  uuid: 'string',
  numeric: 'string',
  int4: 'number',
  int8: 'number',
  float8: 'number',
  bool: 'boolean',
  timestamptz: 'Date',
  date: 'Date',
  jsonb: 'unknown',
  _text: 'string[]',
};

interface Column {
  type: string;
  nullable: boolean;
}

/** Selectable<Database[table]> of every table, as the compiler sees schema.ts. */
function typesOfSchema(): Record<string, Record<string, Column>> {
  const probe = path.join(ROOT, 'test/integration/__schema_probe__.ts');
  const text = `import type { Selectable } from 'kysely';
import type { Database } from '../../src/storage/postgres/schema.js';
export type Tables = { [T in keyof Database]: Selectable<Database[T]> };
export declare const tables: Tables;`;
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, lang, ...rest) =>
    file === probe ? ts.createSourceFile(file, text, lang) : getSourceFile(file, lang, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === probe || fileExists(file);
  const program = ts.createProgram([probe], options, host);
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(errors).toEqual([]);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(probe)!;
  const decl = source.statements.find(ts.isVariableStatement)!.declarationList.declarations[0]!;
  const tables = checker.getTypeAtLocation(decl);
  const out: Record<string, Record<string, Column>> = {};
  for (const table of tables.getProperties()) {
    const row = checker.getTypeOfSymbolAtLocation(table, decl);
    out[table.name] = {};
    for (const column of row.getProperties()) {
      const type = checker.getTypeOfSymbolAtLocation(column, decl);
      const parts = type.isUnion() ? type.types : [type];
      const nullable = parts.some((t) => t.flags & ts.TypeFlags.Null);
      const rest = parts.filter((t) => !(t.flags & ts.TypeFlags.Null));
      // A union of string literals (a CHECK-constrained text column) is a string.
      const base = rest.every((t) => t.isStringLiteral())
        ? 'string'
        : [...new Set(rest.map((t) => checker.typeToString(t)))].join(' | ');
      out[table.name]![column.name] = { type: base === 'false | true' ? 'boolean' : base, nullable };
    }
  }
  return out;
}

describe('schema.ts', () => {
  const name = `laurel_schema_${process.pid}_${randomBytes(3).toString('hex')}`;
  let db: Kysely<any>;
  beforeAll(async () => {
    await cloneTemplate(name);
    db = createPostgres(databaseUrl(name), { max: 1 }).db;
  });
  afterAll(async () => {
    await db.destroy();
    await dropDatabase(name);
  });

  it('declares every table of the migrated database with its columns, types and nullability', async () => {
    // Tables of the public schema, partitions and Kysely's own bookkeeping left out.
    const { rows } = await sql<{ table: string; column: string; udt: string; nullable: string }>`
      SELECT c.table_name AS table, c.column_name AS column, c.udt_name AS udt, c.is_nullable AS nullable
        FROM information_schema.columns c
        JOIN pg_class r ON r.relname = c.table_name AND r.relnamespace = 'public'::regnamespace
       WHERE c.table_schema = 'public' AND NOT r.relispartition AND c.table_name NOT LIKE 'kysely\\_%'
       ORDER BY 1, 2`.execute(db);
    const database: Record<string, Record<string, Column>> = {};
    for (const r of rows) {
      const type = TS_TYPE_OF_SQL[r.udt];
      expect(
        type,
        `${r.table}.${r.column}: SQL type ${r.udt} has no TypeScript counterpart in this test`,
      ).toBeDefined();
      // unknown (a jsonb column's type) cannot say whether null is excluded: it takes both.
      (database[r.table] ??= {})[r.column] = { type: type!, nullable: type !== 'unknown' && r.nullable === 'YES' };
    }
    const declared = typesOfSchema();
    expect(Object.keys(declared).sort()).toEqual(Object.keys(database).sort());
    for (const table of Object.keys(database)) {
      expect({ table, columns: declared[table] }).toEqual({ table, columns: database[table] });
    }
  });
});
