import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneTemplate, databaseUrl, dropDatabase } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { READY_WAIT_MS } from '../support/laurel-process.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';

/** How users start Laurel outside the test harness: a `.env` in the working directory, `npm run up`. */

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const ADMIN_KEY = 'entry-points-admin-key-0123456789abcdef';
const LAUREL_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'LEADERBOARD_REDIS_URL',
  'ADMIN_API_KEY',
  'REDIS_PREFIX',
  'PORT',
];

/** This process's environment without any Laurel variable, so only a `.env` can provide them. */
function environmentWithoutLaurel(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !LAUREL_VARIABLES.includes(k)));
}

const dbName = `laurel_entry_${randomBytes(3).toString('hex')}`;
let redis: PrivateRedis;
let db: pg.Pool;
const dirs: string[] = [];
beforeAll(async () => {
  await cloneTemplate(dbName);
  redis = await startPrivateRedis();
  db = new pg.Pool({ connectionString: databaseUrl(dbName), max: 1 });
});
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await db?.end();
  await redis?.stop();
  await dropDatabase(dbName);
});

function tempDir(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `laurel-${name}-`));
  dirs.push(dir);
  return dir;
}

function dotenv(dir: string, extra: Record<string, string> = {}) {
  const vars = {
    DATABASE_URL: databaseUrl(dbName),
    REDIS_URL: redis.url,
    ADMIN_API_KEY: ADMIN_KEY,
    REDIS_PREFIX: 'entry',
    ...extra,
  };
  writeFileSync(
    path.join(dir, '.env'),
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );
}

describe('.env', () => {
  it('the CLI run in a folder holding only a .env takes its settings from it', async () => {
    const dir = tempDir('dotenv');
    dotenv(dir);
    const tsx = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        tsx,
        path.join(ROOT, 'src/cli/laurel.ts'),
        'keys',
        'create',
        '--name',
        'from-dotenv',
        '--role',
        'read',
      ],
      {
        cwd: dir,
        env: { ...environmentWithoutLaurel(), LOG_LEVEL: 'silent' },
      },
    );
    expect(stdout).toMatch(/lrl_/);
    // The key went to the database that only the .env names.
    const { rows } = await db.query('SELECT role FROM api_keys WHERE name = $1', ['from-dotenv']);
    expect(rows).toEqual([{ role: 'read' }]);
  }, 300_000);
});

/** The processes below `pid` (children, grandchildren...), read from /proc. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      parents.set(Number(entry), Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0;) {
    frontier = [...parents].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...frontier);
  }
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm run up -- --demo', () => {
  it('SIGTERM to it reaches Laurel (drained, exit 0) and stops the background demo too', async () => {
    // A checkout of its own (up.sh works from the folder above its script), sharing this
    // one's code and node_modules, with a .env naming this test's database and Redis.
    const dir = tempDir('up');
    mkdirSync(path.join(dir, 'scripts'));
    for (const script of ['up.sh', 'lib.sh', 'ensure-services.sh'])
      copyFileSync(path.join(ROOT, 'scripts', script), path.join(dir, 'scripts', script));
    for (const entry of [
      'node_modules',
      'src',
      'migrations',
      'clients',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
    ]) {
      symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
    }
    const port = await freePort();
    dotenv(dir, { PORT: String(port), LOG_LEVEL: 'info' });
    const up = spawn('npm', ['run', 'up', '--', '--demo'], {
      cwd: dir,
      env: { ...environmentWithoutLaurel(), DEMO_SECONDS: '600' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    up.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    up.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | string | null>((resolve) =>
      up.once('exit', (code, signal) => resolve(code ?? signal)),
    );

    // The demo's setup is done once it has made its read key (then it prints the hint).
    const deadline = Date.now() + READY_WAIT_MS * 2;
    while ((await db.query("SELECT 1 FROM api_keys WHERE name = 'demo reader'")).rowCount === 0) {
      expect(
        Date.now() < deadline && up.exitCode === null,
        `demo setup not done; output:\n${output.slice(-3000)}`,
      ).toBe(true);
      await new Promise((r) => setTimeout(r, 1000));
    }
    await expect.poll(() => output, { timeout: 30_000 }).toMatch(/curl -H 'Authorization: Bearer lrl_/);
    const below = descendantsOf(up.pid!);
    expect(below.length).toBeGreaterThan(1);

    up.kill('SIGTERM');
    const code = await exited;
    const notAccess = output
      .split('\n')
      .filter((line) => !line.includes('"msg":"request completed"'))
      .join('\n');
    expect(code, `exit ${code}; output:\n${notAccess.slice(-6000)}`).toBe(0);
    expect(output).toMatch(/"msg":"stopped"/);
    // Everything it started, the demo included, ends (the demo within a second or two of Laurel).
    await expect.poll(() => below.filter(alive), { timeout: 30_000, interval: 500 }).toEqual([]);
  }, 900_000);
});
