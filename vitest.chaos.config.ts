import { defineConfig } from 'vitest/config';

/** The chaos suite (`npm run test:chaos`): real processes, crashed and restarted on purpose. */
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/chaos/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 240_000,
    hookTimeout: 120_000,
  },
});
