import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The C# client and its test program (clients/csharp/). */
export const CSHARP_DIR = path.resolve(import.meta.dirname, '../../clients/csharp');

/** The Debian packages that give `mcs` and `mono` what the client references; scripts/test-setup.sh installs them. */
export const MONO_PACKAGES =
  'mono-mcs mono-runtime libmono-system-runtime-serialization4.0-cil libmono-system-net-http4.0-cil';

/** What the client references: all a .NET Standard 2.0 profile has, nothing from a package registry. */
const REFERENCES = ['-r:System.Net.Http.dll', '-r:System.Runtime.Serialization.dll'];

export interface CsharpBuild {
  dir: string;
  library: string;
  program: string;
  remove(): Promise<void>;
}

async function requireTool(tool: string, args: string[]): Promise<void> {
  try {
    await run(tool, args);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(
        `${tool}: not found; the C# client test compiles with mcs and runs with mono. ` +
          `Run scripts/test-setup.sh as root, or apt-get install ${MONO_PACKAGES}`,
      );
    throw err;
  }
}

const sources = async (dir: string) =>
  (await readdir(dir))
    .filter((name) => name.endsWith('.cs'))
    .sort()
    .map((name) => path.join(dir, name));

/** Compiles with a failure's compiler output in the error, not only its exit code. */
async function compile(args: string[]): Promise<void> {
  try {
    await run('mcs', args);
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`mcs ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

/**
 * Compiles the library as Mono's mcs does for Unity-like profiles (warnings are errors) and
 * the test program against it, into a fresh temporary directory.
 */
export async function buildCsharp(): Promise<CsharpBuild> {
  await requireTool('mcs', ['--version']);
  await requireTool('mono', ['--version']);
  const dir = await mkdtemp(path.join(tmpdir(), 'laurel-csharp-'));
  const library = path.join(dir, 'Laurel.Client.dll');
  const program = path.join(dir, 'LaurelClientTests.exe');
  await compile([
    '-target:library',
    '-warnaserror+',
    '-debug',
    `-out:${library}`,
    ...REFERENCES,
    ...(await sources(path.join(CSHARP_DIR, 'src'))),
  ]);
  await compile([
    '-warnaserror+',
    '-debug',
    `-out:${program}`,
    `-r:${library}`,
    ...REFERENCES,
    ...(await sources(path.join(CSHARP_DIR, 'tests'))),
  ]);
  return { dir, library, program, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Runs the test program with a plan and returns its report (what every call answered or threw). */
export async function runCsharp(build: CsharpBuild, plan: object, timeoutMs = 60_000): Promise<Record<string, any>> {
  const planPath = path.join(build.dir, 'plan.json');
  const reportPath = path.join(build.dir, 'report.json');
  await writeFile(planPath, JSON.stringify(plan));
  try {
    await run('mono', ['--debug', build.program, planPath, reportPath], { cwd: build.dir, timeout: timeoutMs });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`the C# test program failed: ${(err as Error).message}\n${stdout}${stderr}`);
  }
  return JSON.parse(await readFile(reportPath, 'utf8'));
}
