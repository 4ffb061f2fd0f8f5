import calculateSlot from 'cluster-key-slot';
import type { ChainableCommander } from 'ioredis';
import { isCluster, type RedisClient } from './connections.js';

export type Pipeline = ChainableCommander;

/** One command of a grouped write or read: `key` is its first key, `add` queues it on a pipeline. */
export interface KeyedCommand {
  key: string;
  add(pipeline: Pipeline): void;
}

export type Reply = [Error | null, unknown];

export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * Sends commands in as few round trips as the server allows and returns their replies in
 * command order. A standalone Redis takes them all in one pipeline. A cluster takes one
 * pipeline per hash slot, all sent at once: ioredis refuses a cluster pipeline whose keys
 * span nodes, and a single-slot pipeline follows a MOVED slot as a whole.
 */
export async function execBySlot(redis: RedisClient, commands: readonly KeyedCommand[]): Promise<Reply[]> {
  if (commands.length === 0) return [];
  if (!isCluster(redis)) {
    const pipeline = redis.pipeline();
    for (const c of commands) c.add(pipeline);
    return (await pipeline.exec()) ?? [];
  }
  const replies = new Array<Reply>(commands.length);
  const order = commands.map((_, i) => i);
  await Promise.all(
    groupBySlot(order, (i) => commands[i]!.key).map(async (indexes) => {
      const pipeline = redis.pipeline();
      for (const i of indexes) commands[i]!.add(pipeline);
      const results = ((await pipeline.exec()) ?? []) as Reply[];
      indexes.forEach((i, k) => {
        replies[i] = results[k] ?? [new Error('no reply from Redis'), null];
      });
    }),
  );
  return replies;
}

/** Groups items by the hash slot of their key, keeping their order within each group. */
export function groupBySlot<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  const bySlot = new Map<number, T[]>();
  for (const item of items) {
    const slot = slotOf(keyOf(item));
    const group = bySlot.get(slot);
    if (group) group.push(item);
    else bySlot.set(slot, [item]);
  }
  return [...bySlot.values()];
}

/** Keys grouped by hash slot, so that a multi-key command (UNLINK, ...) never spans slots. */
export const keysBySlot = (keys: readonly string[]): string[][] => groupBySlot(keys, (key) => key);
