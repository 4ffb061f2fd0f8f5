import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './connections.js';

/**
 * Lua scripts of the leaderboard Redis, one file each under lua/ (their headers give the KEYS
 * and ARGV layout). Each runs atomically, so a reader never sees a member removed from its
 * old entry and not yet added under the new one, nor a rebuilt scope half swapped in. Key
 * names are derived from the period base passed in KEYS[1] (or from the ok hash in KEYS[3]);
 * all of them carry its hash tag, so every script touches one cluster slot.
 */

/** Beside this module in the sources and in dist/ (the build copies the .lua files). */
export const LUA_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lua');

const INCLUDE = /^--@include (\S+)$/gm;

/** A script's text with its `--@include lib/<name>.lua` lines replaced by those files. */
export function loadLua(name: string): string {
  const text = readFileSync(path.join(LUA_DIR, name), 'utf8');
  return text.replace(INCLUDE, (_line, included: string) => loadLua(included));
}

/** Not complete in Redis; the second element is 1 while a rebuild of it runs. */
type NotReady = [0, number];

export interface LeaderboardCommands {
  laurelProject(base: string, markComplete: string, ...args: string[]): Promise<string[]>;
  laurelRebuildBegin(base: string, category: string, token: string, ttl: number): Promise<number>;
  laurelRebuildFill(
    base: string,
    category: string,
    token: string,
    ttl: number,
    after: string,
    ...args: string[]
  ): Promise<number>;
  laurelRebuildReplay(base: string, category: string, token: string, limit: number): Promise<number>;
  laurelRebuildSwap(base: string, category: string, token: string): Promise<number>;
  laurelErase(base: string, member: string, ...categories: string[]): Promise<number>;
  laurelLagRecord(histogram: string, ttl: number, ...bucketCounts: Array<string | number>): Promise<number>;
  laurelSlice(
    scope: string,
    state: string,
    ok: string,
    category: string,
    offset: number,
    limit: number,
    shared: string,
  ): Promise<NotReady | [1, number, number, string[]]>;
  laurelPlace(
    scope: string,
    state: string,
    ok: string,
    category: string,
    member: string,
    shared: string,
  ): Promise<NotReady | [1, number, number?, string?, string?]>;
  laurelAround(
    scope: string,
    state: string,
    ok: string,
    category: string,
    member: string,
    radius: number,
    shared: string,
  ): Promise<NotReady | [1, number, number?, number?, string[]?]>;
  laurelPick(
    scope: string,
    state: string,
    ok: string,
    category: string,
    ...members: string[]
  ): Promise<NotReady | [1, string[]]>;
  /** A scope's total, top N and watched members' places in one call, for the event streams. */
  laurelWatch(
    scope: string,
    state: string,
    ok: string,
    category: string,
    shared: string,
    topN: number,
    ...members: string[]
  ): Promise<NotReady | [1, number, number, string[], Array<number | string>]>;
  /** A member's place and the entry above it, entries at positions and fractions, members' places: goals and cutoffs. */
  laurelTargets(
    scope: string,
    state: string,
    ok: string,
    category: string,
    shared: string,
    ...args: Array<string | number>
  ): Promise<NotReady | [1, number, TargetTriple, TargetTriple, TargetTriples, TargetTriples, TargetTriples]>;
}

/** Flat (rank0, score, entry) triples; rank0 -1 with '' where nothing is ranked (fractions: a position before each). */
type TargetTriple = [number, string, string];
type TargetTriples = Array<number | string>;

export type LeaderboardRedis = RedisClient & LeaderboardCommands;

/** Each command, its file and how many of its arguments are keys. */
const SCRIPTS: Record<keyof LeaderboardCommands, { file: string; keys: number }> = {
  laurelProject: { file: 'project.lua', keys: 1 },
  laurelRebuildBegin: { file: 'rebuild-begin.lua', keys: 1 },
  laurelRebuildFill: { file: 'rebuild-fill.lua', keys: 1 },
  laurelRebuildReplay: { file: 'rebuild-replay.lua', keys: 1 },
  laurelRebuildSwap: { file: 'rebuild-swap.lua', keys: 1 },
  laurelErase: { file: 'erase.lua', keys: 1 },
  laurelLagRecord: { file: 'lag-record.lua', keys: 1 },
  laurelSlice: { file: 'slice.lua', keys: 3 },
  laurelPlace: { file: 'place.lua', keys: 3 },
  laurelAround: { file: 'around.lua', keys: 3 },
  laurelPick: { file: 'pick.lua', keys: 3 },
  laurelWatch: { file: 'watch.lua', keys: 3 },
  laurelTargets: { file: 'targets.lua', keys: 3 },
};

// Read once per process (each connection defines the same scripts).
const texts = new Map<string, string>();
function scriptText(file: string): string {
  let text = texts.get(file);
  if (text === undefined) texts.set(file, (text = loadLua(file)));
  return text;
}

/**
 * Registers the scripts on a connection (ioredis sends EVALSHA and falls back to EVAL; on a
 * cluster, to the node serving the first key's slot).
 */
export function withLeaderboardScripts(redis: RedisClient): LeaderboardRedis {
  for (const [command, { file, keys }] of Object.entries(SCRIPTS)) {
    redis.defineCommand(command, { numberOfKeys: keys, lua: scriptText(file) });
  }
  return redis as LeaderboardRedis;
}
