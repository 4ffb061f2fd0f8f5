import { sql } from 'kysely';
import type { Db } from './database.js';

/** Postgres' clock (clock_timestamp(), not the transaction's now()), in ms since the epoch. */
export async function databaseTimeMs(db: Db): Promise<number> {
  const { rows } = await sql<{ ms: number }>`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms`.execute(db);
  return Number(rows[0]!.ms);
}
