import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';
import type { RedisClient } from '../../src/storage/redis/connections.js';
import { markRidesWithJobAdd } from '../../src/storage/redis/pending-events.js';

const base = {
  DATABASE_URL: 'postgres://x/y',
  REDIS_URL: 'redis://127.0.0.1:6379',
  ADMIN_API_KEY: 'test-admin-key-5e1a9c3f7b0d2e8a4c6f-91b7',
};
const queue = {} as RedisClient;

describe('the pending mark beside the job add', () => {
  it('rides on the queue connection only when the leaderboard Redis is the queue Redis, outside a cluster', () => {
    expect(markRidesWithJobAdd(parseEnv(base), queue)).toBe(queue);
    expect(markRidesWithJobAdd(parseEnv({ ...base, LEADERBOARD_REDIS_URL: 'redis://127.0.0.1:6379' }), queue)).toBe(
      queue,
    );
    expect(
      markRidesWithJobAdd(parseEnv({ ...base, LEADERBOARD_REDIS_URL: 'redis://127.0.0.1:6380' }), queue),
    ).toBeNull();
    expect(markRidesWithJobAdd(parseEnv({ ...base, REDIS_CLUSTER: 'true' }), queue)).toBeNull();
  });
});
