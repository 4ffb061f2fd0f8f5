// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layer rules of docs/ARCHITECTURE.md that an import shows, one entry per folder of src/.
 * Each entry lists everything its folder must not import (ESLint keeps only the last
 * no-restricted-imports that matches a file, so an entry never relies on another).
 */
const storageDrivers = {
  paths: [{ name: 'ioredis', message: 'Redis is reached only through src/storage/redis/.' }],
  patterns: [{ regex: '^(kysely|pg|pg-[a-z-]+)$', message: 'SQL lives only in src/storage/postgres/.' }],
};
const bullmq = (who) => ({
  name: 'bullmq',
  message: `BullMQ is reached only through src/queue/ (and run by src/jobs/); ${who} never imports it.`,
});
const folders = (who, names, why) => ({
  group: names.map((name) => `**/${name}/**`),
  message: `${who} never imports src/${names.join('/, src/')}/: ${why}`,
});

/** The rule of one folder: storage drivers stay in src/storage/ (unless `drivers` is false), plus what is listed. */
function layer(files, { paths = [], patterns = [], drivers = true }) {
  const rule = {
    paths: [...(drivers ? storageDrivers.paths : []), ...paths],
    patterns: [...(drivers ? storageDrivers.patterns : []), ...patterns],
  };
  return { files, rules: { 'no-restricted-imports': ['error', rule] } };
}

export default tseslint.config(
  // Generated (scripts/generate-client.ts) or build output.
  {
    ignores: [
      'dist/',
      'clients/typescript/dist/',
      'coverage/',
      '.data/',
      'bench/results/',
      'clients/typescript/src/schema.ts',
      'clients/typescript/src/operations.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // Files outside tsconfig.json's include still get type information.
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs', 'vitest.chaos.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_` names a value left out on purpose (an omitted key, an unused Express argument).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `async` on a function that only returns a promise keeps a throw a rejection, as its callers expect.
      '@typescript-eslint/require-await': 'off',
      // Exhaustiveness checks interpolate values the types have narrowed to `never`.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowNever: true }],
    },
  },
  // The layer rules of docs/ARCHITECTURE.md (see layer() above).
  layer(['src/**'], {}),
  layer(['src/domain/**'], {
    paths: [bullmq('src/domain/')],
    patterns: [
      { group: ['../**'], message: "src/domain/ is Laurel's own terms: it imports only itself and libraries." },
    ],
  }),
  layer(['src/storage/**'], {
    drivers: false,
    paths: [bullmq('src/storage/')],
    patterns: [folders('src/storage/', ['queue', 'services', 'jobs', 'http', 'bin'], 'storage is the bottom layer.')],
  }),
  layer(['src/queue/**'], {
    patterns: [
      folders(
        'src/queue/',
        ['services', 'jobs', 'http', 'bin'],
        'the queues know their contracts, not who queues or runs them.',
      ),
    ],
  }),
  layer(['src/services/**'], {
    paths: [bullmq('src/services/')],
    patterns: [
      folders(
        'src/services/',
        ['jobs', 'http', 'bin'],
        'services queue work through src/queue/enqueue.ts and know no transport.',
      ),
    ],
  }),
  layer(['src/jobs/**'], {
    patterns: [
      folders(
        'src/jobs/',
        ['http', 'bin'],
        'the worker entry point is src/bin/worker.ts; jobs are thin adapters over the services.',
      ),
    ],
  }),
  layer(['src/http/**'], {
    patterns: [folders('src/http/', ['storage', 'jobs'], 'HTTP reaches storage and queued work through the services.')],
  }),
  {
    files: ['migrations/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../src/**'], message: 'Migrations are frozen in time: they never import app code.' }] },
      ],
    },
  },
  {
    // Tests and benches read answers as untyped JSON; their assertions are what checks the shape.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Spies and fakes hand methods around detached on purpose.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Migrations are frozen in time: they type the database as Kysely<any>, never as today's schema.
    files: ['migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The console's scripts run in the browser (type-checked against the DOM by tsconfig.console.json).
    files: ['src/console/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
);
