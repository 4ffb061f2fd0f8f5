import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/** Variables set in the environment win over `.env`, in `npm run up` and in the app alike. */

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'laurel-env-'));
  dirs.push(dir);
  return dir;
}

const LAUREL = ['DATABASE_URL', 'REDIS_URL', 'ADMIN_API_KEY', 'PORT', 'LOG_LEVEL', 'DOTENV_CONFIG_OVERRIDE'];
/** This process's environment without the variables these tests set, plus `extra`. */
function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !LAUREL.includes(k)));
  return { ...env, ...extra };
}

/** Runs scripts/lib.sh's helpers in bash (as up.sh does) in `dir`; returns what `after` prints. */
async function libSh(dir: string, script: string, env: Record<string, string>) {
  const lib = path.join(ROOT, 'scripts/lib.sh');
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `. ${JSON.stringify(lib)}\n${script}`], {
    cwd: dir,
    env: environment(env),
  });
  return stdout;
}

const show = 'printf "%s\\n" "$DATABASE_URL" "$REDIS_URL" "$PORT"';

describe('scripts/lib.sh (npm run up)', () => {
  it('writes a first .env for its owner only, then loads it without overriding set variables', async () => {
    const dir = tempDir();
    const fromEnv = "postgres://me@db.example:5432/studio?application_name=a b'c";
    const out = await libSh(dir, `write_env_file "$PWD/.env"\nload_env_file .env\n${show}`, {
      DATABASE_URL: fromEnv,
    });
    const lines = out.trim().split('\n');
    expect(lines.slice(-3)).toEqual([fromEnv, 'redis://127.0.0.1:6379/0', '3000']);
    expect(lines[0]).toBe(`up: created ${path.join(dir, '.env')}`);
    expect(lines[1]).toMatch(/^up: admin API key \(also stored as ADMIN_API_KEY in .*\): [0-9a-f]{64}$/);
    expect(statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o600);
    // The file keeps its defaults: the environment's value applies to this run only.
    expect(readFileSync(path.join(dir, '.env'), 'utf8')).toContain(
      'DATABASE_URL=postgres://postgres@127.0.0.1:5432/laurel\n',
    );
  });

  it('leaves an existing .env alone, and says when the environment sets the admin key', async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, '.env'),
      'export DATABASE_URL=postgres://file/db\nREDIS_URL=redis://file:6379\nPORT=3000\n',
    );
    const out = await libSh(dir, `write_env_file "$PWD/.env"\nload_env_file .env\n${show}`, {
      PORT: '4000',
      REDIS_URL: '',
    });
    // Set to the empty string is set: the environment still wins.
    expect(out.split('\n')).toEqual(['postgres://file/db', '', '4000', '']);
    expect(readFileSync(path.join(dir, '.env'), 'utf8')).toContain('PORT=3000\n');

    const fresh = tempDir();
    const said = await libSh(fresh, 'write_env_file "$PWD/.env"', { ADMIN_API_KEY: 'k'.repeat(40) });
    expect(said).toMatch(/ADMIN_API_KEY is set in the environment; it wins/);
    expect(said).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe('scripts/lib.sh ensure_node_modules', () => {
  it('never runs npm ci through a node_modules that links to another checkout', async () => {
    const dir = tempDir();
    const other = tempDir();
    // Another checkout's install, older than this checkout's lockfile.
    writeFileSync(path.join(other, '.package-lock.json'), '{}');
    writeFileSync(path.join(other, 'kept'), 'installed elsewhere');
    symlinkSync(other, path.join(dir, 'node_modules'), 'dir');
    writeFileSync(path.join(dir, 'package-lock.json'), '{}');
    utimesSync(path.join(other, '.package-lock.json'), new Date(0), new Date(0));
    // An npm that only records being called, first on PATH.
    const bin = tempDir();
    writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\necho "$@" >> ${JSON.stringify(path.join(bin, 'calls'))}\n`, {
      mode: 0o755,
    });
    const out = await libSh(dir, 'ensure_node_modules', { PATH: `${bin}:${process.env.PATH}` });
    expect(out).toMatch(/^deps: node_modules links to .* not reinstalling through the link/);
    expect(existsSync(path.join(bin, 'calls'))).toBe(false);
    expect(readFileSync(path.join(other, 'kept'), 'utf8')).toBe('installed elsewhere');

    // A node_modules of its own that is older than the lockfile is still reinstalled.
    const own = tempDir();
    writeFileSync(path.join(own, 'package-lock.json'), '{}');
    await libSh(own, 'ensure_node_modules', { PATH: `${bin}:${process.env.PATH}` });
    expect(readFileSync(path.join(bin, 'calls'), 'utf8')).toBe('ci\n');
  });
});

describe('src/config/dotenv.ts (every entry point)', () => {
  it('loads .env under the variables already set, even with DOTENV_CONFIG_OVERRIDE set', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, '.env'), 'DATABASE_URL=postgres://file/db\nREDIS_URL=redis://file:6379\n');
    const probe = path.join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/config/dotenv.ts')).href)});\n` +
        'console.log(JSON.stringify([process.env.DATABASE_URL, process.env.REDIS_URL]));\n',
    );
    const tsx = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
    for (const override of ['', 'true']) {
      const { stdout } = await run(process.execPath, ['--import', tsx, probe], {
        cwd: dir,
        env: environment({
          DATABASE_URL: 'postgres://env/db',
          ...(override ? { DOTENV_CONFIG_OVERRIDE: override } : {}),
        }),
      });
      expect(JSON.parse(stdout), `DOTENV_CONFIG_OVERRIDE=${override}`).toEqual([
        'postgres://env/db',
        'redis://file:6379',
      ]);
    }
  });
});
