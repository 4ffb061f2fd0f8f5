import type { AppContext } from '../../context.js';
import { leaderboardTarget } from '../../storage/redis/connections.js';
import { NoticeSubscriber, type Notice } from '../../storage/redis/change-notices.js';
import { streamMetrics, type StreamMetrics } from '../../observability/stream-metrics.js';
import { resolvePeriod } from '../period-resolution.js';
import { header, memberStandingBody, withNames, type ResolvedScope } from '../standings-service.js';
import { readerOf, type Sourced } from '../standings/reader.js';
import type { Watched } from '../../storage/redis/leaderboard-cache.js';

/** At most one message per second per stream (docs/design/realtime.md). */
export const STREAM_INTERVAL_MS = 1000;
/** How often a process re-reads what it watches whatever the notices (pub/sub may lose some). */
const STREAM_RESYNC_MS = 15_000;

/** Where a stream's messages go (an HTTP response in production). */
export interface StreamSink {
  /** `data`: the message's JSON body, serialised once for every stream that gets it. */
  send(event: string, data: string): void;
  keepalive(): void;
  end(): void;
}

export type StreamSpec = { kind: 'member'; member: string } | { kind: 'top'; limit: number };

interface Stream {
  spec: StreamSpec;
  sink: StreamSink;
  /** Awaiting its first message (then also in its watch's `fresh`). */
  fresh: boolean;
  /** What was last sent (rank and score, or the top entries), to send only changes. */
  last: string | null;
  unavailable: boolean;
}

/** All streams of one process on one scope: read together, at most once per interval. */
interface ScopeWatch {
  scope: ResolvedScope;
  streams: Set<Stream>;
  fresh: Set<Stream>;
  dirty: boolean;
  /** Visible time of the oldest change not yet read: push lag is measured from it. */
  changedAt: number | null;
  lastRead: number;
  timer: NodeJS.Timeout | null;
  timerDue: number;
  running: boolean;
}

/** The scopes of one (board, period): one channel subscription while any is watched. */
interface PeriodWatch {
  channel: string;
  board: string;
  period: string;
  scopes: Map<string, ScopeWatch>;
  finishing: boolean;
}

/**
 * The realtime streams of one web process. Fan-out does not grow with the streams: the
 * worker publishes one notice per changed (board, period); this process subscribes only to
 * the periods its streams watch, and re-reads each watched scope at most once per
 * interval with one Redis call for all of its streams there (every watched member's
 * placement and the longest top N), then writes to the streams whose state changed.
 */
export class StreamHub {
  private readonly periods = new Map<string, PeriodWatch>();
  private readonly metrics: StreamMetrics;
  private subscriber: NoticeSubscriber | null = null;
  private ticker: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly ctx: AppContext) {
    this.metrics = streamMetrics(ctx.metrics.registry);
  }

  /** Starts a stream; the returned function ends it (the client left). */
  async open(scope: ResolvedScope, spec: StreamSpec, sink: StreamSink): Promise<() => void> {
    const stream: Stream = { spec, sink, fresh: true, last: null, unavailable: false };
    this.metrics.open.inc({ kind: spec.kind });
    let gone = false;
    const leave = () => {
      if (gone) return;
      gone = true;
      this.metrics.open.dec({ kind: spec.kind });
      this.leave(scope, stream);
    };
    if (scope.view.state === 'closed' || this.periods.get(this.channel(scope))?.finishing) {
      // Nothing will change any more: the final state, then `closed`.
      const watch = this.scopeWatch(scope);
      watch.streams.add(stream);
      watch.fresh.add(stream);
      await this.finishScope(watch);
      return leave;
    }
    const period = this.periodWatch(scope);
    const key = scopeKey(scope);
    let watch = period.scopes.get(key);
    if (!watch) period.scopes.set(key, (watch = this.scopeWatch(scope)));
    watch.streams.add(stream);
    watch.fresh.add(stream);
    this.schedule(watch);
    this.startTicker();
    return leave;
  }

  private scopeWatch(scope: ResolvedScope): ScopeWatch {
    return {
      scope,
      streams: new Set(),
      fresh: new Set(),
      dirty: false,
      changedAt: null,
      lastRead: 0,
      timer: null,
      timerDue: 0,
      running: false,
    };
  }

  private channel(scope: ResolvedScope): string {
    return this.ctx.leaderboard.keys.changes(scope.board.id, scope.period);
  }

  private periodWatch(scope: ResolvedScope): PeriodWatch {
    const channel = this.channel(scope);
    let period = this.periods.get(channel);
    if (period) return period;
    period = { channel, board: scope.board.id, period: scope.period, scopes: new Map(), finishing: false };
    this.periods.set(channel, period);
    this.metrics.subscriptions.inc();
    this.notices()
      .subscribe(channel)
      .catch((err: Error) => this.ctx.log.warn({ err: err.message, channel }, 'could not subscribe to change notices'));
    return period;
  }

  private notices(): NoticeSubscriber {
    this.subscriber ??= new NoticeSubscriber(leaderboardTarget(this.ctx.env), {
      onNotice: (channel, notice) => this.onNotice(channel, notice),
      // Notices sent while the connection was down are lost: read everything again.
      onUp: () => this.touchAll(Date.now()),
      onDown: () =>
        this.ctx.log.warn(
          'change-notice connection lost; streams re-read their scopes every interval until it is back',
        ),
      onError: (err) => this.ctx.log.debug({ err: err.message }, 'change-notice connection error'),
    });
    return this.subscriber;
  }

  private leave(scope: ResolvedScope, stream: Stream): void {
    const period = this.periods.get(this.channel(scope));
    const key = scopeKey(scope);
    const watch = period?.scopes.get(key);
    if (!period || !watch || !watch.streams.delete(stream)) return;
    watch.fresh.delete(stream);
    if (watch.streams.size > 0) return;
    if (watch.timer) clearTimeout(watch.timer);
    period.scopes.delete(key);
    if (period.scopes.size === 0) this.drop(period);
  }

  private drop(period: PeriodWatch): void {
    const { channel } = period;
    if (this.periods.get(channel) !== period) return;
    this.periods.delete(channel);
    this.metrics.subscriptions.dec();
    this.subscriber
      ?.unsubscribe(channel)
      .catch((err: Error) => this.ctx.log.debug({ err: err.message }, 'unsubscribe failed'));
    if (this.periods.size === 0) this.stopTicker();
  }

  private onNotice(channel: string, notice: Notice): void {
    const period = this.periods.get(channel);
    if (!period) return;
    if (notice.kind === 'closed') void this.finishPeriod(period);
    else for (const watch of period.scopes.values()) this.markChanged(watch, notice.at);
  }

  private markChanged(watch: ScopeWatch, at: number): void {
    watch.dirty = true;
    watch.changedAt = Math.min(watch.changedAt ?? at, at);
    this.schedule(watch);
  }

  private touchAll(at: number): void {
    for (const period of this.periods.values()) for (const watch of period.scopes.values()) this.markChanged(watch, at);
  }

  /** New streams are served at once; changes wait until an interval has passed since the last read. */
  private schedule(watch: ScopeWatch): void {
    if (watch.running || this.closed) return;
    const now = Date.now();
    const fresh = watch.fresh.size > 0;
    if (!fresh && !watch.dirty) return;
    const due = fresh ? now : Math.max(now, watch.lastRead + STREAM_INTERVAL_MS);
    if (watch.timer) {
      if (watch.timerDue <= due) return;
      clearTimeout(watch.timer);
    }
    watch.timerDue = due;
    // Even "now" goes through a timer: new streams arriving together are read together.
    watch.timer = setTimeout(() => void this.run(watch), due - now);
  }

  private async run(watch: ScopeWatch): Promise<void> {
    watch.timer = null;
    watch.running = true;
    const now = Date.now();
    const full = watch.dirty && now >= watch.lastRead + STREAM_INTERVAL_MS;
    const changedAt = full ? watch.changedAt : null;
    if (full) {
      watch.dirty = false;
      watch.changedAt = null;
      watch.lastRead = now;
    }
    const targets = [...(full ? watch.streams : watch.fresh)];
    try {
      if (targets.length > 0) {
        const state = await this.read(watch, targets);
        await this.deliver(watch, targets, state, changedAt, false);
      }
    } catch (err) {
      this.ctx.log.warn(
        { err: (err as Error).message, board: watch.scope.board.id, period: watch.scope.period },
        'stream read failed; retrying',
      );
      for (const s of targets) {
        if (s.unavailable) continue;
        s.unavailable = true;
        s.sink.send(
          'unavailable',
          JSON.stringify({
            error: 'unavailable',
            message: 'standings cannot be read right now; the stream resumes by itself',
          }),
        );
        this.metrics.messages.inc({ event: 'unavailable' });
      }
      // Retried after an interval (a failed read counts as a read for the pacing).
      watch.dirty = true;
      watch.changedAt ??= changedAt;
      if (!full) watch.lastRead = now;
      for (const s of targets) this.served(watch, s);
    } finally {
      watch.running = false;
    }
    this.schedule(watch);
  }

  private async read(watch: ScopeWatch, targets: readonly Stream[]): Promise<Sourced<Watched>> {
    const members = new Set<string>();
    let topN = 0;
    for (const s of targets) {
      if (s.spec.kind === 'member') members.add(s.spec.member);
      else topN = Math.max(topN, s.spec.limit);
    }
    if (!watch.scope.periodStored) {
      // The period had no row when the stream began: the first event creates it.
      const resolved = await resolvePeriod(this.ctx, watch.scope.board, watch.scope.period);
      if (resolved)
        watch.scope = { ...watch.scope, view: resolved.view, periodStored: resolved.stored, retired: resolved.retired };
    }
    if (!watch.scope.periodStored) return { source: 'cache', total: 0, top: [], placed: new Map() };
    return readerOf(watch.scope).watch(this.ctx, watch.scope, [...members], topN);
  }

  /**
   * Writes each target stream's message if its state changed (always: first and final
   * messages). Streams of the same member or limit share one serialised body per read.
   */
  private async deliver(
    watch: ScopeWatch,
    targets: readonly Stream[],
    state: Sourced<Watched>,
    changedAt: number | null,
    always: boolean,
  ): Promise<void> {
    const { scope } = watch;
    const bodies = new Map<string, string>();
    let named: Awaited<ReturnType<typeof withNames>> | null = null;
    const sentAt = Date.now();
    for (const s of targets) {
      let event: string;
      let fingerprint: string;
      let cacheKey: string;
      if (s.spec.kind === 'member') {
        event = 'standing';
        cacheKey = `m:${s.spec.member}`;
        const placed = state.placed.get(s.spec.member) ?? { total: state.total, rank: null, scaled: null };
        fingerprint = `${placed.rank}|${placed.scaled}`;
        if (!always && !s.fresh && !s.unavailable && fingerprint === s.last) continue;
        if (!bodies.has(cacheKey))
          bodies.set(cacheKey, JSON.stringify(memberStandingBody(scope, s.spec.member, state.source, placed)));
      } else {
        event = 'top';
        cacheKey = `t:${s.spec.limit}`;
        const top = state.top.slice(0, s.spec.limit);
        fingerprint = top.map((e) => `${e.rank}|${e.member}|${e.scaled}|${e.subscore ?? ''}`).join(',');
        if (!always && !s.fresh && !s.unavailable && fingerprint === s.last) continue;
        if (!bodies.has(cacheKey)) {
          named ??= await withNames(this.ctx, scope.board, state.top);
          bodies.set(
            cacheKey,
            JSON.stringify({
              ...header(scope, state.total, state.source),
              limit: s.spec.limit,
              offset: 0,
              entries: named.slice(0, s.spec.limit),
            }),
          );
        }
      }
      const wasFresh = s.fresh;
      s.sink.send(event, bodies.get(cacheKey)!);
      this.served(watch, s);
      s.unavailable = false;
      s.last = fingerprint;
      this.metrics.messages.inc({ event });
      if (!wasFresh && changedAt !== null) this.metrics.pushLag.observe(Math.max(0, sentAt - changedAt) / 1000);
    }
  }

  private served(watch: ScopeWatch, s: Stream): void {
    s.fresh = false;
    watch.fresh.delete(s);
  }

  /** The period closed: every stream of it gets the final state and `closed`, then ends. */
  private async finishPeriod(period: PeriodWatch): Promise<void> {
    if (period.finishing) return;
    period.finishing = true;
    this.ctx.periods.forget(period.board, period.period);
    await Promise.all([...period.scopes.values()].map((watch) => this.finishScope(watch)));
    this.drop(period);
  }

  private async finishScope(watch: ScopeWatch): Promise<void> {
    if (watch.timer) clearTimeout(watch.timer);
    watch.timer = null;
    watch.dirty = false;
    const streams = [...watch.streams];
    try {
      const resolved = await resolvePeriod(this.ctx, watch.scope.board, watch.scope.period);
      if (resolved) watch.scope = { ...watch.scope, view: resolved.view, periodStored: resolved.stored };
      await this.deliver(watch, streams, await this.read(watch, streams), null, true);
    } catch (err) {
      // A client that reconnects reads the final state from a closed period's stream.
      this.ctx.log.warn({ err: (err as Error).message }, 'final stream state could not be read');
    }
    for (const s of streams) {
      s.sink.send('closed', JSON.stringify({ board: watch.scope.board.id, period: watch.scope.view }));
      this.metrics.messages.inc({ event: 'closed' });
      s.sink.end();
    }
  }

  /**
   * The comment on every stream each keepalive interval; every resync interval, a look at
   * the watched periods' states (a close whose notice was lost still ends its streams) and
   * one re-read of every watched scope, which heals any lost notice; while the notice
   * connection is down, that re-read every interval.
   */
  private startTicker(): void {
    if (this.ticker || this.closed) return;
    let sinceKeepalive = 0;
    let sinceResync = 0;
    const every = Math.min(STREAM_INTERVAL_MS, this.ctx.env.STREAM_KEEPALIVE_MS);
    this.ticker = setInterval(() => {
      sinceKeepalive += every;
      sinceResync += every;
      const down = this.subscriber !== null && !this.subscriber.connected;
      if (down || sinceResync >= STREAM_RESYNC_MS) this.touchAll(Date.now());
      if (sinceResync >= STREAM_RESYNC_MS) {
        sinceResync = 0;
        void this.checkClosed();
      }
      if (sinceKeepalive >= this.ctx.env.STREAM_KEEPALIVE_MS) {
        sinceKeepalive = 0;
        for (const period of this.periods.values())
          for (const watch of period.scopes.values()) for (const s of watch.streams) s.sink.keepalive();
      }
    }, every);
    this.ticker.unref();
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  private async checkClosed(): Promise<void> {
    const watched = [...this.periods.values()];
    const stored = await this.ctx.periods
      .getMany(watched.map((p) => ({ boardId: p.board, key: p.period })))
      .catch(() => []);
    const closed = new Set(stored.filter((p) => p.state === 'closed').map((p) => `${p.boardId}|${p.key}`));
    for (const period of watched) if (closed.has(`${period.board}|${period.period}`)) void this.finishPeriod(period);
  }

  /** Ends every stream (shutdown): clients reconnect to another process. */
  close(): void {
    this.closed = true;
    this.stopTicker();
    for (const period of this.periods.values()) {
      for (const watch of period.scopes.values()) {
        if (watch.timer) clearTimeout(watch.timer);
        for (const s of watch.streams) s.sink.end();
      }
    }
    this.subscriber?.close();
  }
}

function scopeKey(scope: ResolvedScope): string {
  return `${scope.category}|${scope.region}`;
}
