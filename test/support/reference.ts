/**
 * An independent model of the ranking rules, written for the tests only: it shares no code with
 * Laurel. Values are integers in the board's smallest unit (the test generates them that
 * way), times are milliseconds.
 */
export type Aggregation = 'best' | 'sum' | 'last';
export type Order = 'desc' | 'asc';
export type TieBreak = 'first' | 'last' | 'member' | 'shared';

export interface RefEvent {
  key: string;
  member: string;
  units: number;
  atMs: number;
  category?: string;
  /** Subscore in the board's smallest unit; absent counts as 0 (docs/design/projection.md). */
  sub?: number;
}

/** A reference event as posted to `POST /v1/events` on `board`, its units scaled down by the board's decimals. */
export function wireEvent(board: string, e: RefEvent, decimals = 0) {
  const unit = 10 ** decimals;
  return {
    board,
    member: e.member,
    value: e.units / unit,
    idempotencyKey: e.key,
    occurredAt: new Date(e.atMs).toISOString(),
    ...(e.category ? { category: e.category } : {}),
    ...(e.sub === undefined ? {} : { subscore: e.sub / unit }),
  };
}

export interface RefStanding {
  rank: number;
  member: string;
  units: number;
  sub: number;
}

interface Agg {
  units: number;
  sub: number;
  reachedMs: number;
  lastKey: string;
}

/** `a` strictly better than `b` in `order`. */
const ahead = (order: Order, a: number, b: number) => (order === 'desc' ? a > b : a < b);

/** Per member: the aggregate of their events. `subOrder` only matters for `best` (the best (value, subscore) pair). */
export function aggregate(
  events: readonly RefEvent[],
  aggregation: Aggregation,
  order: Order,
  subOrder: Order = 'desc',
): Map<string, Agg> {
  const out = new Map<string, Agg>();
  for (const e of events) {
    const sub = e.sub ?? 0;
    const cur = out.get(e.member);
    if (!cur) {
      out.set(e.member, { units: e.units, sub, reachedMs: e.atMs, lastKey: e.key });
      continue;
    }
    if (aggregation === 'sum') {
      cur.units += e.units;
      cur.sub += sub;
      cur.reachedMs = Math.max(cur.reachedMs, e.atMs);
    } else if (aggregation === 'best') {
      const better = ahead(order, e.units, cur.units) || (e.units === cur.units && ahead(subOrder, sub, cur.sub));
      if (better) Object.assign(cur, { units: e.units, sub, reachedMs: e.atMs });
      else if (e.units === cur.units && sub === cur.sub && e.atMs < cur.reachedMs) cur.reachedMs = e.atMs;
    } else {
      const later =
        e.atMs > cur.reachedMs ||
        (e.atMs === cur.reachedMs && Buffer.compare(Buffer.from(e.key), Buffer.from(cur.lastKey)) > 0);
      if (later) Object.assign(cur, { units: e.units, sub, reachedMs: e.atMs, lastKey: e.key });
    }
  }
  return out;
}

/** Ranks aggregates: value, then subscore when `subOrder` is given, then the tie rule. */
export function rankAll(
  aggs: Map<string, Agg>,
  order: Order,
  tieBreak: TieBreak,
  subOrder: Order | null = null,
): RefStanding[] {
  const rows = [...aggs.entries()].map(([member, a]) => ({ member, ...a, sec: Math.floor(a.reachedMs / 1000) }));
  rows.sort((x, y) => {
    if (x.units !== y.units) return order === 'desc' ? y.units - x.units : x.units - y.units;
    if (subOrder && x.sub !== y.sub) return subOrder === 'desc' ? y.sub - x.sub : x.sub - y.sub;
    if (tieBreak === 'first' && x.sec !== y.sec) return x.sec - y.sec;
    if (tieBreak === 'last' && x.sec !== y.sec) return y.sec - x.sec;
    return Buffer.compare(Buffer.from(x.member), Buffer.from(y.member));
  });
  const out: RefStanding[] = [];
  rows.forEach((r, i) => {
    const prev = out[i - 1];
    const rank = tieBreak === 'shared' && prev && prev.units === r.units && prev.sub === r.sub ? prev.rank : i + 1;
    out.push({ rank, member: r.member, units: r.units, sub: r.sub });
  });
  return out;
}

/** Reference standings of one scope: only events of `category` when given. */
export function referenceStandings(
  events: readonly RefEvent[],
  board: { aggregation: Aggregation; order: Order; tieBreak: TieBreak; subscore?: { order: Order } | null },
  category?: string,
): RefStanding[] {
  const scoped = category ? events.filter((e) => e.category === category) : events;
  const subOrder = board.subscore?.order ?? null;
  return rankAll(
    aggregate(scoped, board.aggregation, board.order, subOrder ?? 'desc'),
    board.order,
    board.tieBreak,
    subOrder,
  );
}

/** A small deterministic PRNG so a failing case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(items: readonly T[], rand: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** A target as the goals reference gives it, in units (scores, needed and gap). */
export interface RefGoal {
  member: string;
  rank: number;
  units: number;
  needed: number;
  gap: number | null;
}

/** The goals of one member in one scope (in units), made from the scope's reference standings. */
export interface RefGoals {
  rank: number | null;
  units: number | null;
  next: RefGoal | null;
  following: RefGoal[];
  awards: Array<{ award: string } & RefGoal>;
}

type RankingRules = { order: Order; tieBreak: TieBreak; subscore?: { order: Order } | null };

/**
 * The score `member` needs to pass `target` (or share its rank, under shared), found by trying
 * it: the member's aggregate at the target's score, reached later than the target, ranked
 * against the target by rankAll; one unit better when that does not put the member ahead.
 * A member without a score has no subscore: one that loses every subscore comparison.
 */
export function referenceNeeded(
  board: RankingRules,
  member: string,
  mine: RefStanding | undefined,
  target: RefStanding,
) {
  const subOrder = board.subscore?.order ?? null;
  const worstSub = subOrder === 'asc' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  const passes = (units: number) => {
    const duel = new Map<string, Agg>([
      [target.member, { units: target.units, sub: target.sub, reachedMs: 0, lastKey: '' }],
      [member, { units, sub: mine ? mine.sub : subOrder ? worstSub : 0, reachedMs: 4_000_000_000_000, lastKey: '' }],
    ]);
    const [first, second] = rankAll(duel, board.order, board.tieBreak, subOrder);
    return first!.member === member || first!.rank === second!.rank;
  };
  return passes(target.units) ? target.units : target.units + (board.order === 'desc' ? 1 : -1);
}

/**
 * The reference of the goals route: the entry above the member, followed members ranked above
 * (nearest first; all ranked ones, lowest first, for a member without a score; at most 10),
 * and each award tier (listing position) the member has not reached.
 */
export function referenceGoals(
  ranked: readonly RefStanding[],
  board: RankingRules,
  member: string,
  followed: readonly string[],
  tiers: ReadonlyArray<{ award: string; rank: number }>,
): RefGoals {
  const at = ranked.findIndex((s) => s.member === member);
  const mine = ranked[at];
  const goal = (target: RefStanding): RefGoal => {
    const needed = referenceNeeded(board, member, mine, target);
    return {
      member: target.member,
      rank: target.rank,
      units: target.units,
      needed,
      gap: mine ? Math.abs(needed - mine.units) : null,
    };
  };
  const group = new Set(followed.filter((f) => f !== member));
  const followedRanked = ranked.filter((s) => group.has(s.member) && (!mine || s.rank < mine.rank));
  return {
    rank: mine?.rank ?? null,
    units: mine?.units ?? null,
    next: at > 0 ? goal(ranked[at - 1]!) : null,
    following: followedRanked.reverse().slice(0, 10).map(goal),
    awards: tiers.flatMap((tier) => {
      const target = ranked[tier.rank - 1];
      if (!target || (mine && mine.rank <= tier.rank)) return [];
      return [{ award: tier.award, ...goal(target), rank: tier.rank }];
    }),
  };
}

/**
 * The reference of cutoffs (units): the score at each position of the listing order, and at
 * the position ceil(total × p / 100) (at least 1) of each percent, with percents given in
 * ten-thousandths of a percent so that the ceiling is exact.
 */
export function referenceCutoffs(
  ranked: readonly RefStanding[],
  ranks: readonly number[],
  percentTenThousandths: readonly number[],
) {
  const at = (position: number) => ranked[position - 1]?.units ?? null;
  const denominator = 100 * 10_000;
  return {
    total: ranked.length,
    ranks: ranks.map((rank) => ({ rank, units: at(rank) })),
    percents: percentTenThousandths.map((p) => {
      const product = ranked.length * p;
      const position = Math.max(1, Math.floor(product / denominator) + (product % denominator === 0 ? 0 : 1));
      return { percent: p / 10_000, rank: position, units: at(position) };
    }),
  };
}
