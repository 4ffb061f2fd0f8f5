import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DockerfileParser } from 'dockerfile-ast';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneTemplate, databaseUrl, dropDatabase } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { startCommand, waitForHttp, type LaurelProcess } from '../support/laurel-process.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const ADMIN_KEY = 'production-start-admin-key-0123456789';

let redis: PrivateRedis;
const dbName = `laurel_prod_${randomBytes(3).toString('hex')}`;
const started: LaurelProcess[] = [];
beforeAll(async () => {
  await cloneTemplate(dbName);
  redis = await startPrivateRedis();
});
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop('SIGKILL')));
  await redis?.stop();
  await dropDatabase(dbName);
});

function baseEnv(prefix: string): Record<string, string> {
  return { DATABASE_URL: databaseUrl(dbName), REDIS_URL: redis.url, REDIS_PREFIX: prefix, ADMIN_API_KEY: ADMIN_KEY };
}

function start(command: string[], env: Record<string, string>, name: string, cwd?: string): LaurelProcess {
  const p = startCommand(command, { env, name, cwd });
  started.push(p);
  return p;
}

async function call(base: string, method: string, urlPath: string, body?: unknown, key: string | null = ADMIN_KEY) {
  const res = await fetch(base + urlPath, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
  };
}

/**
 * One event applied end to end, then SIGTERM while a second one is in flight: its batch sits
 * between commit and projection in the worker (fault hook), and its `?wait=true` request is
 * open on the web side. Both must finish before the processes exit 0.
 */
async function expectDrainsInFlight(base: string, web: LaurelProcess, worker: LaurelProcess, board: string) {
  expect(
    (await call(base, 'PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'all', tieBreak: 'member' })).status,
  ).toBe(201);
  const first = await call(base, 'POST', '/v1/events?wait=true', {
    board,
    member: 'ann',
    value: 3,
    idempotencyKey: `${board}-1`,
  });
  expect(first).toMatchObject({ status: 200, body: { results: [{ status: 'applied' }] } });

  const inFlight = call(base, 'POST', '/v1/events?wait=true', {
    board,
    member: 'bob',
    value: 5,
    idempotencyKey: `${board}-2`,
  });
  await worker.waitForLog(
    (l) =>
      l.fault === 'paused-after-commit' &&
      l.jobId !== undefined &&
      worker.logs.filter((x) => x.fault === 'paused-after-commit').length >= 2,
  );
  const exits = [web, worker].filter((p, i, all) => all.indexOf(p) === i).map((p) => p.stop('SIGTERM'));
  await web.waitForLog((l) => l.msg === 'shutting down');
  // Out of the load balancer first, still serving meanwhile (SHUTDOWN_DELAY_MS).
  expect(await call(base, 'GET', '/readyz')).toMatchObject({ status: 503, body: { status: 'draining' } });
  expect((await call(base, 'GET', '/healthz')).status).toBe(200);
  expect(await inFlight).toMatchObject({ status: 200, body: { results: [{ status: 'applied' }] } });
  expect(await Promise.all(exits)).toEqual(exits.map(() => 0));
  expect(worker.logs.some((l) => l.msg === 'stopped')).toBe(true);
}

const PAUSE = { LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS: '1500' };
const DELAY = { SHUTDOWN_DELAY_MS: '1500' };

/**
 * The image's build stage, reproduced in `buildDir`: exactly the files its COPY lines bring
 * (so a file the build needs and no COPY brings fails here as it fails `docker build`), then
 * its RUN lines. Its `npm ci` is the one step not re-run: it installs from the same lockfile as
 * this checkout, whose node_modules is linked in instead.
 */
async function runBuildStage(dockerfile: ReturnType<typeof DockerfileParser.parse>, buildDir: string) {
  const [buildFrom, runtimeFrom] = dockerfile.getFROMs();
  const inStage = (i: { getRange(): { start: { line: number } } }) =>
    i.getRange().start.line > buildFrom!.getRange().start.line &&
    i.getRange().start.line < runtimeFrom!.getRange().start.line;
  const stage = dockerfile.getInstructions().filter(inStage);
  const workdir = stage.find((i) => i.getKeyword() === 'WORKDIR')!.getArgumentsContent()!;
  const ignored = new Set(
    readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim()),
  );
  const copies = stage.filter((i) => i.getKeyword() === 'COPY');
  expect(copies.length).toBeGreaterThan(0);
  for (const copy of copies) {
    const args = copy.getArguments().map((a) => a.getValue());
    expect(
      args.some((a) => a.startsWith('--')),
      'the build stage copies from the context only',
    ).toBe(false);
    const sources = args.slice(0, -1);
    const target = path.join(buildDir, path.relative(workdir, path.resolve(workdir, args.at(-1)!)));
    for (const source of sources) {
      const from = path.join(ROOT, source);
      if (statSync(from).isDirectory()) {
        // Docker copies a directory's contents, minus what .dockerignore leaves out of the context.
        cpSync(from, target, { recursive: true, filter: (f) => !ignored.has(path.basename(f)) });
      } else {
        const into = sources.length > 1 || args.at(-1)!.endsWith('/');
        mkdirSync(into ? target : path.dirname(target), { recursive: true });
        copyFileSync(from, into ? path.join(target, path.basename(source)) : target);
      }
    }
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(buildDir, 'node_modules'), 'dir');
  const runs = stage.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent()!);
  expect(runs).toContain('npm run build');
  for (const command of runs.filter((c) => !c.startsWith('npm ci')))
    await run('sh', ['-c', command], { cwd: buildDir });
}

describe('the image, reproduced: its build stage from its COPY lines, its runtime from dist/ and production dependencies only', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'laurel-runtime-'));
  const buildDir = mkdtempSync(path.join(tmpdir(), 'laurel-build-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(buildDir, { recursive: true, force: true });
  });

  it('builds, installs, migrates, serves and drains from the Procfile commands without any dev dependency', async () => {
    const dockerfile = DockerfileParser.parse(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
    // The runtime stage's dependency install, taken from the Dockerfile itself.
    const runtimeStart = dockerfile.getFROMs().at(-1)!.getRange().start.line;
    const install = dockerfile
      .getInstructions()
      .filter((i) => i.getKeyword() === 'RUN' && i.getRange().start.line >= runtimeStart)
      .map((i) => i.getArgumentsContent()!.split('&&')[0]!.trim())
      .find((c) => c.startsWith('npm ci'))!;
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, file), path.join(dir, file));
    await Promise.all([
      run('sh', ['-c', `${install} --prefer-offline --loglevel=error`], {
        cwd: dir,
        env: { ...process.env, NODE_ENV: 'production' },
      }),
      runBuildStage(dockerfile, buildDir),
    ]);
    // COPY --from=build /app/dist ./dist
    cpSync(path.join(buildDir, 'dist'), path.join(dir, 'dist'), { recursive: true });
    // (typescript itself arrives as a peer of a production dependency, @bull-board/api's valibot.)
    for (const dev of ['tsx', 'vitest', 'dockerfile-utils', 'fast-check'])
      expect(existsSync(path.join(dir, 'node_modules', dev)), dev).toBe(false);

    const procfile = Object.fromEntries(
      readFileSync(path.join(ROOT, 'Procfile'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => [l.split(':')[0], l.replace(/^\w+:\s*/, '').split(/\s+/)]),
    );
    const env = { ...baseEnv('prod-image'), NODE_ENV: 'production' };
    const release = await run(procfile.release[0], procfile.release.slice(1), {
      cwd: dir,
      env: { ...process.env, ...env },
    });
    expect(release.stdout).toMatch(/database is up to date/);
    // The demo command compiled with the client it imports.
    const demoHelp = await run(process.execPath, ['dist/src/cli/laurel.js', 'demo', '--help'], {
      cwd: dir,
      env: { ...process.env, ...env },
    });
    expect(demoHelp.stdout).toMatch(/demo/);

    const [port, probePort, closedPort] = [await freePort(), await freePort(), await freePort()];
    const web = start(procfile.web, { ...env, ...DELAY, PORT: String(port) }, 'image-web', dir);
    const worker = start(procfile.worker, { ...env, ...PAUSE, METRICS_PORT: String(probePort) }, 'image-worker', dir);
    const base = `http://127.0.0.1:${port}`;
    const probes = `http://127.0.0.1:${probePort}`;
    await Promise.all([waitForHttp(`${base}/readyz`), waitForHttp(`${probes}/readyz`)]);
    expect((await call(base, 'GET', '/readyz')).body).toMatchObject({ status: 'ready' });
    // The image's HEALTHCHECK as Docker runs it in each container, with that container's
    // environment: the web one answers on PORT; in a worker's, nothing listens on PORT (the
    // image's default, 3000 there, is a closed port here) and the probes answer on METRICS_PORT.
    const healthcheck = (vars: Record<string, string>) =>
      run(process.execPath, ['dist/src/bin/healthcheck.js'], { cwd: dir, env: { ...process.env, ...vars } });
    await healthcheck({ PORT: String(port), METRICS_PORT: String(closedPort) });
    await healthcheck({ PORT: String(closedPort), METRICS_PORT: String(probePort) });
    await expect(healthcheck({ PORT: String(closedPort), METRICS_PORT: String(closedPort) })).rejects.toMatchObject({
      code: 1,
    });
    // A worker's metrics are admin-only, like the web side's.
    expect((await call(probes, 'GET', '/metrics', undefined, null)).status).toBe(401);
    expect((await call(probes, 'GET', '/metrics')).body).toMatch(/laurel_events_total/);

    await expectDrainsInFlight(base, web, worker, 'image-board');
    // A loaded machine took up to 240 s for the installs, the build and the start-ups: a budget, not a measure.
  }, 900_000);
});

describe('SIGTERM to the npm commands users run reaches Node', () => {
  it('npm run web + npm run worker: in-flight request and job drained, both exit 0', async () => {
    const [port, probePort] = [await freePort(), await freePort()];
    const web = start(['npm', 'run', 'web'], { ...baseEnv('npm-split'), ...DELAY, PORT: String(port) }, 'npm-web');
    const worker = start(
      ['npm', 'run', 'worker'],
      { ...baseEnv('npm-split'), ...PAUSE, METRICS_PORT: String(probePort) },
      'npm-worker',
    );
    const base = `http://127.0.0.1:${port}`;
    await Promise.all([waitForHttp(`${base}/readyz`), waitForHttp(`http://127.0.0.1:${probePort}/readyz`)]);
    await expectDrainsInFlight(base, web, worker, 'npm-split');
  }, 300_000);

  it('npm start (web and workers in one process): drained, exit 0', async () => {
    const port = await freePort();
    const all = start(
      ['npm', 'start'],
      { ...baseEnv('npm-start'), ...DELAY, ...PAUSE, PORT: String(port), METRICS_PORT: '0' },
      'npm-start',
    );
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/readyz`);
    await expectDrainsInFlight(base, all, all, 'npm-start');
  }, 300_000);
});
