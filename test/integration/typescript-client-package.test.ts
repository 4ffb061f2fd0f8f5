import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLIENT_DIR = path.join(ROOT, 'clients/typescript');
const RUNTIME_DEPENDENCIES = ['openapi-fetch', 'standardwebhooks'];
/** npm's own settings of a parent `npm test` (its npm_config_* variables) must not reach the scratch installs. */
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
);

/** The ```ts blocks of a Markdown file, each a program of its own. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as Record<string, any>;

/** What a user of the published package runs: plain Node, no TypeScript, no loader. */
const SCRIPT = `
import { createLaurelClient, LaurelError } from '@laurel/client';

const [baseUrl, apiKey] = process.argv.slice(2);
const laurel = createLaurelClient({ baseUrl, apiKey });
await laurel.putBoard({ params: { path: { boardId: 'packaged' } }, body: { aggregation: 'best', period: 'all' } });
const { results } = await laurel.postEventsAndWait({
  body: {
    events: [
      { board: 'packaged', member: 'p1', value: 12, idempotencyKey: 'pkg-1' },
      { board: 'packaged', member: 'p2', value: 30, idempotencyKey: 'pkg-2' },
    ],
  },
});
const standing = (memberId) => laurel.getMemberStanding({ params: { path: { boardId: 'packaged', memberId } } });
const me = await standing('p1');
const nobody = await standing('p3');
const refused = await createLaurelClient({ baseUrl: 'http://127.0.0.1:1' })
  .getHealth()
  .catch((err) => (err instanceof LaurelError ? err.code : String(err)));
console.log(JSON.stringify({ statuses: results.map((r) => r.status), rank: me.rank, nobody: nobody.rank, refused }));
`;

describe('the TypeScript client as an installed package', () => {
  let h: Harness;
  let scratch: string;
  let app: string;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'laurel-client-'));
    app = path.join(scratch, 'app');
    await mkdir(app);
    const packing = (async () => {
      // prepack builds dist/ with the client's own tsconfig first.
      await run('npm', ['pack', '--pack-destination', scratch], { cwd: CLIENT_DIR, env: npmEnv });
      const tarball = (await readdir(scratch)).find((f) => f.endsWith('.tgz'));
      // The root's install fills npm's cache with tarballs but not the registry metadata that
      // resolving a dependency by name needs offline, so the scratch project links the root's
      // installed copies of the client's dependencies (their versions are checked below).
      const links = Object.fromEntries(
        RUNTIME_DEPENDENCIES.map((name) => [name, `file:${path.join(ROOT, 'node_modules', name)}`]),
      );
      const manifest = {
        name: 'laurel-client-scratch',
        private: true,
        type: 'module',
        dependencies: { '@laurel/client': `file:${path.join(scratch, tarball!)}`, ...links },
      };
      await writeFile(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
      // No lifecycle scripts: the linked folders belong to the root's install.
      await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
        cwd: app,
        env: npmEnv,
      });
    })();
    [h] = await Promise.all([createHarness(), packing]);
  });

  afterAll(async () => {
    await h?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('ships the build, the document, README and LICENSE, not the sources, at the server version', async () => {
    const installed = path.join(app, 'node_modules/@laurel/client');
    const files = await readdir(installed, { recursive: true });
    expect(files).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'openapi.json', 'README.md', 'LICENSE']),
    );
    expect(files.filter((f) => f.startsWith('src'))).toEqual([]);
    const manifest = await readJson(path.join(installed, 'package.json'));
    const root = await readJson(path.join(ROOT, 'package.json'));
    expect(manifest).toMatchObject({ version: root.version, license: 'Apache-2.0', engines: { node: '>=20' } });
    expect(manifest.private).toBeUndefined();
    // The client declares the versions the root installs, the ones linked above.
    for (const name of RUNTIME_DEPENDENCIES) expect(manifest.dependencies[name]).toBe(root.dependencies[name]);
  });

  it('runs under plain node: posts with wait=true, reads the rank, tells a refused connection', async () => {
    await writeFile(path.join(app, 'main.mjs'), SCRIPT);
    const { stdout } = await run('node', ['main.mjs', h.baseUrl, ADMIN_KEY], { cwd: app });
    expect(JSON.parse(stdout.trim())).toEqual({
      statuses: ['applied', 'applied'],
      rank: 2,
      nobody: null,
      refused: 'network_error',
    });
  });

  it("the READMEs' TypeScript examples compile, strict, against the installed package", async () => {
    const sources = [path.join(CLIENT_DIR, 'README.md'), path.join(ROOT, 'README.md')];
    const blocks = (await Promise.all(sources.map(async (f) => tsBlocks(await readFile(f, 'utf8'))))).flat();
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    const files = await Promise.all(
      blocks.map(async (code, i) => {
        const file = path.join(app, `example-${i}.ts`);
        await writeFile(file, code);
        return file;
      }),
    );
    const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
    const options = ['--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext'];
    const nodeTypes = ['--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types')];
    const compiled = await run(tsc, [...options, ...nodeTypes, ...files], { cwd: app }).catch(
      (err: { stdout: string }) => err,
    );
    expect(compiled.stdout).toBe('');
  }, 120_000);
});
