import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppContext } from '../context.js';
import { connected } from '../storage/redis/connections.js';
import { KEY_LAYOUT, KeyLayoutRecord, type LayoutView } from '../storage/redis/key-layout.js';
import { unlinkMatching } from '../storage/redis/maintenance.js';
import { rebuildStatus, requestRebuild } from './rebuild-service.js';
import { verifyLeaderboards } from './verify-service.js';

/** How long a handover may take (rebuilding every open period) before another worker may try. */
const HANDOVER_LOCK_MS = 15 * 60_000;

export interface KeyLayoutWatch {
  /** Settles once the record was read (the start-up rebuild check waits for it). */
  firstLook: Promise<void>;
  foreign(): boolean;
  /** Readiness: fails while the leaderboard Redis is written in a layout this release does not know. */
  probe(): Promise<void>;
  stop(): void;
}

export interface KeyLayoutWatchOptions {
  role: 'web' | 'worker';
  everyMs: number;
  quietMs: number;
  /** A worker's job consumers (BullMQ workers): paused while the layout is not its own, resumed after. */
  jobs?(): readonly JobConsumer[];
}

interface JobConsumer {
  pause(): Promise<void>;
  resume(): void;
  isPaused(): boolean;
}

/**
 * Keeps this process's use of the leaderboard Redis to a key layout it knows. Every
 * `everyMs` it reads the layout record (storage/redis/key-layout.ts), one round trip:
 *
 * - A layout it does not know (a later release took the Redis over, or a rollback past a
 *   layout change): the cache is neither read nor written, reads come from Postgres,
 *   readiness fails, and a worker takes no job until it sees its own layout again; the
 *   release that owns the Redis rebuilds it.
 * - Writes of 0.2.0's layout seen within `quietMs` (a 0.2.0 worker still running during a
 *   rolling upgrade): the cache is not read, so every answer comes from Postgres.
 * - Once none has been seen for `quietMs`, one worker hands over: it removes 0.2.0's state
 *   hashes and every completeness mark, rebuilds every open period, and verifies Redis
 *   against Postgres, logging the differences; no manual step.
 *
 * Every process also renews a presence key of its layout, which a later release waits on
 * before it takes the Redis over.
 */
export function watchKeyLayout(ctx: AppContext, options: KeyLayoutWatchOptions): KeyLayoutWatch {
  const record = new KeyLayoutRecord(ctx.leaderboard.redis, ctx.env.REDIS_PREFIX);
  let seen: LayoutView | undefined;
  let handingOver = false;
  let stopped = false;

  const apply = async (view: LayoutView) => {
    const foreign = view.layout !== KEY_LAYOUT;
    if (foreign !== (seen !== undefined && seen.layout !== KEY_LAYOUT)) {
      if (foreign)
        ctx.log.error(
          { found: view.layout, known: KEY_LAYOUT },
          'leaderboard Redis is written in a key layout this release does not know: not using it (reads from Postgres)',
        );
      else if (seen) {
        // What another layout wrote, and what this one skipped meanwhile, is not to be
        // trusted: the handover removes the marks and rebuilds, as after 0.2.0.
        await record.noteEarlierWrites(options.quietMs);
        view = { ...view, mixed: true, handoverOwed: true };
        ctx.log.info({ layout: KEY_LAYOUT }, 'leaderboard Redis is in this release key layout again; handing over');
      }
    }
    if (view.mixed !== (seen?.mixed ?? false))
      ctx.log.warn(
        { mixed: view.mixed },
        view.mixed
          ? 'a process of the 0.2.0 key layout writes to the leaderboard Redis: reads from Postgres until it stops'
          : 'no write of the 0.2.0 key layout for a while',
      );
    seen = view;
    ctx.leaderboard.access.writes = !foreign;
    // Until the handover is done, 0.2.0's marks may still stand.
    ctx.leaderboard.access.reads = !foreign && !view.mixed && !view.handoverOwed;
    // Enforced on every look, so consumers started after the first one follow too. Active
    // jobs finish: their projections are turned into rebuild requests
    // (LeaderboardCache.project with writes off), which a worker of the owning layout runs.
    for (const worker of options.jobs?.() ?? []) {
      // Not awaited: the pause waits for the active jobs, and the looks go on meanwhile.
      if (foreign && !worker.isPaused())
        void worker.pause().catch((err: Error) => ctx.log.warn({ err: err.message }, 'could not pause a job consumer'));
      else if (!foreign && worker.isPaused()) worker.resume();
    }
    if (options.role === 'worker' && !foreign && view.handoverOwed && !view.mixed && !handingOver) {
      handingOver = true;
      void handOver(ctx, record)
        .catch((err: Error) => ctx.failures.warn('leaderboard-redis', err, 'key layout handover failed; retrying'))
        .finally(() => (handingOver = false));
    }
  };

  let looked!: () => void;
  const firstLook = new Promise<void>((resolve) => (looked = resolve));
  const tick = async () => {
    try {
      await apply(await record.look({ writerAliveMs: options.everyMs * 3 }));
      looked();
    } catch (err) {
      // An unreachable Redis is the connection check's to report; the last view stands.
      ctx.failures.warn('leaderboard-redis', err as Error, 'could not read the key layout record');
    }
  };
  const loop = async () => {
    await connected(ctx.leaderboard.redis, options.everyMs);
    while (!stopped) {
      await tick();
      await sleep(options.everyMs, undefined, { ref: false });
    }
  };
  void loop();

  return {
    firstLook,
    foreign: () => seen !== undefined && seen.layout !== KEY_LAYOUT,
    async probe() {
      if (seen && seen.layout !== KEY_LAYOUT)
        throw new Error(`leaderboard Redis key layout ${seen.layout} unknown (this release: ${KEY_LAYOUT})`);
    },
    stop() {
      stopped = true;
    },
  };
}

async function handOver(ctx: AppContext, record: KeyLayoutRecord): Promise<void> {
  const owner = randomUUID();
  if (!(await record.lockHandover(owner, HANDOVER_LOCK_MS))) return;
  try {
    const prefix = ctx.env.REDIS_PREFIX;
    // Without its mark a category is read from Postgres until its rebuild swaps in.
    await unlinkMatching(ctx.leaderboard.redis, [`${prefix}:lb:{*}:s:*`, `${prefix}:lb:{*}:ok`]);
    const { rebuildId, scopes } = await requestRebuild(ctx, {}, 'layout-handover');
    ctx.log.info({ rebuildId, scopes }, 'no 0.2.0 writer left: rebuilding every open period');
    let state = 'waiting';
    const deadline = Date.now() + HANDOVER_LOCK_MS;
    while (state !== 'completed') {
      await sleep(1000);
      state = (await rebuildStatus(ctx, rebuildId)).state;
      // Failed, or gone: the flag stays, and the next look hands over again.
      if (state === 'failed' || state === 'unknown' || Date.now() > deadline)
        throw new Error(`the handover rebuild ${rebuildId} ended ${state}`);
    }
    const { scopes: compared, differences, missing } = await verifyLeaderboards(ctx);
    const summary = { rebuildId, scopes: compared, differences: differences.length, missing: missing.length };
    if (differences.length === 0) ctx.log.info(summary, 'key layout handover done: Redis verified against Postgres');
    else
      ctx.log.warn(
        { ...summary, sample: differences.slice(0, 5) },
        'key layout handover done with differences (writes during the check count too): run laurel verify',
      );
    await record.finishHandover();
  } catch (err) {
    await record.releaseHandover(owner).catch(() => undefined);
    throw err;
  }
}
