import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ADMIN_DATABASE_URL } from '../support/databases.js';
import { createPostgres } from '../../src/storage/postgres/database.js';
import { asDomainError } from '../../src/storage/postgres/pg-errors.js';
import { Contention, InvalidInput } from '../../src/domain/errors.js';

/** What Postgres itself answers, turned into Laurel's errors as repositories throw them. */
describe('Postgres errors as domain errors', () => {
  const { db } = createPostgres(ADMIN_DATABASE_URL, { max: 1, statementTimeoutMs: 50 });
  afterAll(async () => {
    await db.destroy();
  });
  const thrown = (query: Promise<unknown>) => query.then(() => undefined, asDomainError);

  it('text Postgres cannot store is InvalidInput (invalid_text): retrying never helps', async () => {
    const err = await thrown(sql`SELECT ${'{"note": "a\\u0000b"}'}::jsonb ->> 'note'`.execute(db));
    expect(err).toBeInstanceOf(InvalidInput);
    expect((err as InvalidInput).code).toBe('invalid_text');
  });

  it('a statement timeout is Contention, an Unavailable of Postgres: a retry may pass', async () => {
    const err = await thrown(sql`SELECT pg_sleep(1)`.execute(db));
    expect(err).toBeInstanceOf(Contention);
    expect((err as Contention).dependency).toBe('postgres');
  });

  it('any other error stays as it was', async () => {
    const err = await thrown(sql`SELECT 1 / 0`.execute(db));
    expect(err).not.toBeInstanceOf(InvalidInput);
    expect(err).not.toBeInstanceOf(Contention);
    expect((err as Error).message).toMatch(/division by zero/);
  });
});
