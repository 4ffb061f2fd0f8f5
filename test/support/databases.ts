import pg from 'pg';
import { createWorkerRedis, type RedisClient } from '../../src/storage/redis/connections.js';

/** Connection used to create and drop per-test databases (never one the tests write to). */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** `npm run test:cluster` sets it: TEST_REDIS_URL then lists the seed nodes of a private Redis Cluster. */
export const TEST_REDIS_CLUSTER = process.env.TEST_REDIS_CLUSTER === 'true';

/** A connection of the tests' own to the test Redis (standalone or cluster). */
export function testRedis(url: string = TEST_REDIS_URL): RedisClient {
  return createWorkerRedis({ urls: url.split(','), cluster: TEST_REDIS_CLUSTER }, 'laurel-test-support');
}

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdminClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
