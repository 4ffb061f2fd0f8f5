import { DateTime, IANAZone } from 'luxon';

export const PERIOD_KINDS = ['all', 'day', 'week', 'month'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

export interface PeriodWindow {
  key: string;
  startsAt: Date;
  /** Exclusive end; null for the `all` period, which never ends. */
  endsAt: Date | null;
}

const ALL_STARTS_AT = new Date(Date.UTC(2000, 0, 1));

export function isValidTimezone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/**
 * The last window computed per (kind, timezone). Periods partition time, so an instant inside
 * a known window belongs to it: the Luxon work (tens to hundreds of microseconds, paid by
 * every `period=current` read and every routed event) runs once per period boundary.
 */
const lastWindow = new Map<string, { key: string; starts: number; ends: number }>();

/** The period of kind `kind` that contains `at`, with boundaries computed in `timezone`. */
export function periodContaining(kind: PeriodKind, timezone: string, at: Date): PeriodWindow {
  if (kind === 'all') return { key: 'all', startsAt: ALL_STARTS_AT, endsAt: null };
  const ms = at.getTime();
  const memoKey = `${kind}|${timezone}`;
  const known = lastWindow.get(memoKey);
  if (known && ms >= known.starts && ms < known.ends) {
    return { key: known.key, startsAt: new Date(known.starts), endsAt: new Date(known.ends) };
  }
  const window = computePeriodContaining(kind, timezone, at);
  // Bounded: one entry per (kind, timezone) in use.
  if (lastWindow.size > 1000) lastWindow.clear();
  lastWindow.set(memoKey, { key: window.key, starts: window.startsAt.getTime(), ends: window.endsAt!.getTime() });
  return window;
}

function computePeriodContaining(kind: Exclude<PeriodKind, 'all'>, timezone: string, at: Date): PeriodWindow {
  const local = DateTime.fromJSDate(at, { zone: timezone });
  const unit = kind === 'day' ? 'day' : kind === 'week' ? 'week' : 'month';
  // Luxon weeks are ISO weeks: they start on Monday, and weekYear is the ISO week-numbering year.
  const start = local.startOf(unit);
  const end = start.plus({ [`${unit}s`]: 1 }).startOf(unit);
  return { key: keyOf(kind, start), startsAt: start.toJSDate(), endsAt: end.toJSDate() };
}

function keyOf(kind: Exclude<PeriodKind, 'all'>, start: DateTime): string {
  switch (kind) {
    case 'day':
      return start.toFormat('yyyy-MM-dd');
    case 'week':
      return start.toFormat("kkkk-'W'WW");
    case 'month':
      return start.toFormat('yyyy-MM');
  }
}

const KEY_PATTERNS: Record<PeriodKind, RegExp> = {
  all: /^all$/,
  day: /^\d{4}-\d{2}-\d{2}$/,
  week: /^\d{4}-W\d{2}$/,
  month: /^\d{4}-\d{2}$/,
};

/**
 * The period a key names, or null when the key is not a valid key for this kind of board
 * (a key that parses but names no real day, week or month is invalid too).
 */
export function periodForKey(kind: PeriodKind, timezone: string, key: string): PeriodWindow | null {
  if (!KEY_PATTERNS[kind].test(key)) return null;
  if (kind === 'all') return periodContaining('all', timezone, ALL_STARTS_AT);
  const format = kind === 'day' ? 'yyyy-MM-dd' : kind === 'week' ? "kkkk-'W'WW" : 'yyyy-MM';
  const start = DateTime.fromFormat(key, format, { zone: timezone });
  if (!start.isValid) return null;
  const window = periodContaining(kind, timezone, start.toJSDate());
  return window.key === key ? window : null;
}
