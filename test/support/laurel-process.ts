import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ENTRY = { web: 'src/bin/web.ts', worker: 'src/bin/worker.ts', all: 'src/bin/all-in-one.ts' } as const;

/**
 * How long a wait for a process (a log line, an answer) lasts by default. A readiness wait,
 * not a performance assertion: start-up took 20-60 s on a loaded 2-core machine.
 */
export const READY_WAIT_MS = 180_000;

export interface LogLine {
  /** pino's level name: trace, debug, info, warn, error or fatal. */
  level: string;
  /** ISO 8601, UTC. */
  time?: string;
  msg: string;
  [field: string]: unknown;
}

export interface LaurelProcess {
  name: string;
  child: ChildProcess;
  /** Every JSON log line the process printed so far. */
  logs: LogLine[];
  /** Resolves with the first log line (past or future) that matches. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Freezes the process (SIGSTOP) or lets it go on (SIGCONT), like a stalled VM. */
  freeze(): void;
  thaw(): void;
  /** Sends a signal and waits for the process to exit; resolves with its exit code or signal. */
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

/**
 * Runs Laurel's real entry points as child processes (Node with tsx as an import hook, so
 * signals reach the process under test), the way a Procfile would: what the tests see is
 * what production runs.
 */
export function startLaurel(kind: keyof typeof ENTRY, env: Record<string, string>, name: string = kind): LaurelProcess {
  return startCommand([process.execPath, '--import', 'tsx', ENTRY[kind]], { env, name });
}

/** Any command that runs Laurel (`npm run web`, a Procfile line), with the same log capture. */
export function startCommand(
  command: string[],
  options: { env: Record<string, string>; name: string; cwd?: string },
): LaurelProcess {
  const { env, name } = options;
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const waiters = new Set<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    logs.push(line);
    for (const w of waiters) {
      if (w.match(line)) {
        waiters.delete(w);
        w.resolve(line);
      }
    }
  });
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => {
      // Kept with the logs, so a post-mortem shows a crash and what it printed.
      logs.push({ level: 'fatal', msg: 'process exited', code, signal, stderr: stderr.join('').slice(-4000) });
      resolve(code ?? signal);
    }),
  );

  return {
    name,
    child,
    logs,
    waitForLog(match, timeoutMs = READY_WAIT_MS) {
      const seen = logs.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve: (line: LogLine) => (clearTimeout(timer), resolve(line)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`${name}: no matching log line within ${timeoutMs} ms; stderr: ${stderr.join('').slice(-2000)}`),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls a URL until it answers 2xx. */
export async function waitForHttp(url: string, timeoutMs = READY_WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer 2xx within ${timeoutMs} ms`);
}
