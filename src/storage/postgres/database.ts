import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from './schema.js';

// int8 columns (ids, scaled values, versions) stay below 2^53 by construction: read them
// as numbers, and fail loudly rather than round if that ever stops being true.
pg.types.setTypeParser(pg.types.builtins.INT8, (text: string) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${text} exceeds 2^53`);
  return n;
});

export type Db = Kysely<Database>;

export interface PostgresHandle {
  db: Db;
  pool: pg.Pool;
}

export function createPostgres(connectionString: string, options: { max?: number; applicationName?: string; statementTimeoutMs?: number } = {}): PostgresHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'laurel',
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on('error', () => undefined);
  // So does a checked-out client between two queries (inside a transaction, a cursor, a
  // session): the pool listens only to idle ones. Its user sees the failure on its next
  // query, and the pool drops the dead client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}

export async function pingPostgres(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
