import pg from 'pg';
import { Kysely, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type { Database } from './schema.js';
import { Unavailable } from '../../domain/errors.js';
import { isPostgresOutageCode } from './pg-errors.js';

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

export function createPostgres(
  connectionString: string,
  options: {
    max?: number;
    applicationName?: string;
    statementTimeoutMs?: number;
    sessionSettings?: Readonly<Record<string, string>>;
  } = {},
): PostgresHandle {
  const settings = Object.entries(options.sessionSettings ?? {}).map(([name, value]) => `-c ${name}=${value}`);
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'laurel',
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(settings.length > 0 ? { options: settings.join(' ') } : {}),
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on('error', () => undefined);
  // So does a checked-out client between two queries (inside a transaction, a cursor, a
  // session): the pool listens only to idle ones. Its user sees the failure on its next
  // query, and the pool drops the dead client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: outageAware(pool) }) });
  return { db, pool };
}

export async function pingPostgres(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/**
 * What the pool and its clients throw when Postgres cannot be reached: pg reports a refused
 * or lost connection and a connect timeout as plain Errors (or socket errors), and only
 * what the server answered as DatabaseError. So any non-DatabaseError from connecting or
 * from a query, and a DatabaseError with a connection SQLSTATE, becomes Unavailable.
 */
function asOutage(err: unknown): unknown {
  if (err instanceof pg.DatabaseError)
    return isPostgresOutageCode(err)
      ? new Unavailable(`Postgres is unavailable: ${err.message}`, undefined, { cause: err, dependency: 'postgres' })
      : err;
  // A type parser's RangeError (int8 above 2^53) and the like are bugs, not outages.
  if (err instanceof Error && (err.constructor === Error || 'syscall' in err)) {
    return new Unavailable(`Postgres is unavailable: ${err.message}`, undefined, {
      cause: err,
      dependency: 'postgres',
    });
  }
  return err;
}

/** The pool as Kysely sees it, with connection failures turned into Unavailable. */
function outageAware(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect().catch((err: unknown) => {
        throw asOutage(err);
      });
      const wrapped = {
        query: (text: string, values: readonly unknown[]) =>
          client.query(text, values as unknown[]).catch((err: unknown) => {
            throw asOutage(err);
          }),
        release: (destroy?: boolean) => client.release(destroy),
      };
      // Kysely passes a cursor to query() only when configured with one; Laurel streams through pg-cursor on the raw pool.
      return wrapped as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
