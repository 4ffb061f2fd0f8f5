import { mastersOf, type RedisClient } from './connections.js';

export interface MemoryUsage {
  usedBytes: number;
  /** 0 when the server has no maxmemory (it can grow until the host runs out). */
  maxBytes: number;
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
}

/**
 * used_memory against maxmemory, from INFO memory. On a cluster, the master closest to its
 * limit: a queue lives in one slot, and any full master refuses that queue's writes.
 */
export async function readMemoryUsage(redis: RedisClient): Promise<MemoryUsage> {
  const infos = await Promise.all(mastersOf(redis).map((m) => m.info('memory')));
  const usages = infos.map((info) => ({ usedBytes: field(info, 'used_memory'), maxBytes: field(info, 'maxmemory') }));
  const ratio = (u: MemoryUsage) => (u.maxBytes > 0 ? u.usedBytes / u.maxBytes : 0);
  return usages.reduce((worst, u) => (ratio(u) > ratio(worst) ? u : worst), usages[0] ?? { usedBytes: 0, maxBytes: 0 });
}
