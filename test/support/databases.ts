import pg from 'pg';
import { inject } from 'vitest';
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

/** A fresh database cloned from the run's migrated template (see global-setup). */
export async function cloneTemplate(name: string): Promise<void> {
  const template = inject('templateDatabase');
  // Two clones of one template at the same instant can collide; a short retry settles it.
  for (let attempt = 0; ; attempt += 1) {
    try {
      await withAdminClient((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
      return;
    } catch (err) {
      if (attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}
