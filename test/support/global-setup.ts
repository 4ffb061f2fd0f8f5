import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { databaseUrl, dropDatabase, withAdminClient } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/**
 * Migrates one template database from empty per run, with the real `npm run migrate`
 * entry point; every test file then clones it (CREATE DATABASE ... TEMPLATE), which is
 * fast and keeps files isolated.
 */
export default async function setup(project: TestProject) {
  const template = `laurel_tpl_${process.pid}_${Date.now().toString(36)}`;
  await withAdminClient((c) => c.query(`CREATE DATABASE "${template}"`));
  const root = path.resolve(import.meta.dirname, '../..');
  execFileSync(path.join(root, 'node_modules/.bin/tsx'), ['src/bin/migrate.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl(template) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  project.provide('templateDatabase', template);
  return async () => {
    await dropDatabase(template);
  };
}
