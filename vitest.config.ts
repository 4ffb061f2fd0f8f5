import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    // Hooks start processes: a readiness wait (test/support/laurel-process.ts), long on a loaded machine.
    hookTimeout: 240_000,
  },
});
