/**
 * CPU time of the processes that take part in a bench run, from /proc (utime + stime) and,
 * for Redis servers, from `INFO cpu` (which counts the server's threads too). A figure that
 * survives a noisy machine far better than wall time: what each process spent, not how long
 * the run took.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type pg from 'pg';

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** Cumulative CPU milliseconds of a process (its own threads; not its exited children). */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces, in parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** A process and its descendants (a web process with WEB_PROCESSES > 1 forks its workers). */
export function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parentOf.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1) for (const [pid, parent] of parentOf) if (parent === tree[i]) tree.push(pid);
  return tree;
}

async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
}

export interface CpuParts {
  /** Named processes by pid provider (each called at every sample: a tree may grow). */
  processes: Record<string, () => number[]>;
  /** Postgres backends of this database (listed from pg_stat_activity at every sample). */
  postgres?: { pool: pg.Pool; database: string };
  /** Redis servers by name. */
  redis: Record<string, Redis>;
  /** This process (a load that runs in the bench itself, such as the raw limit). */
  self?: string;
}

/**
 * Samples every part while `run` runs (every 200 ms, so a Postgres backend that comes and
 * goes is counted up to its last sample) and returns each part's CPU milliseconds.
 */
export async function measureCpu<T>(
  parts: CpuParts,
  run: () => Promise<T>,
): Promise<{ result: T; cpuMs: Record<string, number> }> {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  const seen = (part: string, pid: number, ms: number | null, atStart: boolean) => {
    if (ms === null) return;
    const id = `${part}\n${pid}`;
    // A process first seen after the start began during the run: all its time counts.
    if (!first.has(id)) first.set(id, atStart ? ms : 0);
    last.set(id, ms);
  };
  const backends = async () => {
    if (!parts.postgres) return [];
    const { rows } = await parts.postgres.pool.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [parts.postgres.database],
    );
    return rows.map((r) => r.pid);
  };
  const sample = async (atStart: boolean) => {
    for (const [name, pids] of Object.entries(parts.processes))
      for (const pid of pids()) seen(name, pid, processCpuMs(pid), atStart);
    for (const pid of await backends()) seen('postgres', pid, processCpuMs(pid), atStart);
  };
  const redisBefore = Object.fromEntries(
    await Promise.all(Object.entries(parts.redis).map(async ([name, r]) => [name, await redisCpuMs(r)] as const)),
  );
  const selfBefore = process.cpuUsage();
  await sample(true);
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await new Promise((r) => setTimeout(r, 200));
      await sample(false).catch(() => undefined);
    }
  })();
  let result: T;
  try {
    result = await run();
  } finally {
    sampling = false;
    await sampler;
  }
  await sample(false);
  const self = process.cpuUsage(selfBefore);
  const cpuMs: Record<string, number> = {};
  for (const [id, end] of last) {
    const part = id.split('\n')[0]!;
    cpuMs[part] = (cpuMs[part] ?? 0) + (end - first.get(id)!);
  }
  for (const [name, r] of Object.entries(parts.redis)) cpuMs[name] = (await redisCpuMs(r)) - redisBefore[name]!;
  if (parts.self) cpuMs[parts.self] = (self.user + self.system) / 1000;
  return { result, cpuMs: Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, Math.round(v)])) };
}

/** Per 1,000 events, each part and their total. */
export function perThousand(cpuMs: Record<string, number>, events: number): Record<string, number> & { total: number } {
  const out: Record<string, number> & { total: number } = { total: 0 };
  let total = 0;
  for (const [part, ms] of Object.entries(cpuMs)) {
    out[part] = Math.round(((ms * 1000) / events) * 10) / 10;
    total += ms;
  }
  out.total = Math.round(((total * 1000) / events) * 10) / 10;
  return out;
}
