import pg from 'pg';
import { Contention, InvalidInput } from '../../domain/errors.js';

/** The SQLSTATE codes Laurel acts on (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
export const PG_ERROR = {
  /** A CHECK constraint: an aggregate beyond ±2^40, say. */
  checkViolation: '23514',
  /** Text with a NUL byte (jsonb \u0000). */
  untranslatableCharacter: '22P05',
  /** Bytes that are not valid UTF-8. */
  characterNotInRepertoire: '22021',
  /** A lock not granted within lock_timeout. */
  lockNotAvailable: '55P03',
  deadlockDetected: '40P01',
  /** A repeatable read transaction touched a row changed since its snapshot. */
  serializationFailure: '40001',
  /** statement_timeout (or a cancel request) ended the statement. */
  queryCanceled: '57014',
  /** The server is going away or not accepting connections. */
  adminShutdown: '57P01',
  crashShutdown: '57P02',
  cannotConnectNow: '57P03',
  tooManyConnections: '53300',
} as const;

/** Class 08: connection exceptions. */
const CONNECTION_EXCEPTION_CLASS = '08';

const OUTAGE_CODES: ReadonlySet<string> = new Set([
  PG_ERROR.adminShutdown,
  PG_ERROR.crashShutdown,
  PG_ERROR.cannotConnectNow,
  PG_ERROR.tooManyConnections,
]);

/** The SQLSTATE of an error Postgres answered with; undefined for anything else. */
export function pgErrorCode(err: unknown): string | undefined {
  return err instanceof pg.DatabaseError ? err.code : undefined;
}

export function hasPgCode(err: unknown, ...codes: string[]): boolean {
  const code = pgErrorCode(err);
  return code !== undefined && codes.includes(code);
}

/** Text Postgres refuses to store (retrying or resending it never helps), as Laurel's error; undefined for any other error. */
export function unstorableTextError(err: unknown): InvalidInput | undefined {
  if (!hasPgCode(err, PG_ERROR.untranslatableCharacter, PG_ERROR.characterNotInRepertoire)) return undefined;
  return new InvalidInput('the request contains text Postgres cannot store (NUL or invalid UTF-8)', [], 'invalid_text');
}

/** A statement that lost a race for time or locks (timeout, lock timeout, deadlock), as Laurel's error; undefined for any other error. */
function contentionError(err: unknown): Contention | undefined {
  if (!hasPgCode(err, PG_ERROR.queryCanceled, PG_ERROR.lockNotAvailable, PG_ERROR.deadlockDetected)) return undefined;
  return new Contention(`Postgres gave up on a statement: ${(err as Error).message}`, undefined, {
    cause: err,
    dependency: 'postgres',
  });
}

/**
 * What a repository throws for an error Postgres answered: Laurel's error where the code has
 * a meaning callers act on (text it cannot store, contention), the error itself otherwise;
 * so no caller above storage reads SQLSTATEs.
 */
export function asDomainError(err: unknown): unknown {
  return unstorableTextError(err) ?? contentionError(err) ?? err;
}

/** Postgres answered that it cannot serve now (shutting down, starting, out of connections, connection lost). */
export function isPostgresOutageCode(err: unknown): boolean {
  const code = pgErrorCode(err);
  return code !== undefined && (OUTAGE_CODES.has(code) || code.startsWith(CONNECTION_EXCEPTION_CLASS));
}
