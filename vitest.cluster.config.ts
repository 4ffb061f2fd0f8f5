import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:cluster` (scripts/test-cluster.sh starts the cluster and sets TEST_REDIS_URL
 * and TEST_REDIS_CLUSTER): the tests of the projection pipeline, the query API and rebuilds,
 * with queues and leaderboards in one Redis Cluster.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/integration/exactly-once.test.ts',
      'test/integration/multi-board-batch.test.ts',
      'test/integration/ranking-semantics.test.ts',
      'test/integration/scopes.test.ts',
      'test/integration/moderation.test.ts',
      'test/integration/query-api.test.ts',
      'test/integration/boards.test.ts',
      'test/integration/rebuild.test.ts',
      'test/integration/realtime-streams.test.ts',
    ],
  },
});
