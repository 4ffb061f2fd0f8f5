// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const storageDriversOnlyInStorage = {
  paths: [{ name: 'ioredis', message: 'Redis is reached only through src/storage/redis/.' }],
  patterns: [{ regex: '^(kysely|pg|pg-[a-z-]+)$', message: 'SQL lives only in src/storage/postgres/.' }],
};

export default tseslint.config(
  // Generated (scripts/generate-client.ts) or build output.
  { ignores: ['dist/', 'coverage/', '.data/', 'bench/results/', 'clients/typescript/src/schema.ts', 'clients/typescript/src/operations.ts'] },
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
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // `async` on a function that only returns a promise keeps a throw a rejection, as its callers expect.
      '@typescript-eslint/require-await': 'off',
      // Exhaustiveness checks interpolate values the types have narrowed to `never`.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowNever: true }],
    },
  },
  // The layer rules of docs/ARCHITECTURE.md that an import shows.
  { files: ['src/**'], ignores: ['src/storage/**'], rules: { 'no-restricted-imports': ['error', storageDriversOnlyInStorage] } },
  {
    files: ['src/http/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...storageDriversOnlyInStorage,
          patterns: [...storageDriversOnlyInStorage.patterns, { group: ['**/storage/**'], message: 'src/http/ reaches storage through the services.' }],
        },
      ],
    },
  },
  {
    files: ['src/jobs/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...storageDriversOnlyInStorage,
          patterns: [
            ...storageDriversOnlyInStorage.patterns,
            { group: ['**/bin/**'], message: 'The worker entry point is src/bin/worker.ts; src/jobs/ never imports src/bin/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['migrations/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['../src/**'], message: 'Migrations are frozen in time: they never import app code.' }] }],
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
