import { CronExpressionParser } from 'cron-parser';
import { DateTime, IANAZone } from 'luxon';

export const PERIOD_KINDS = ['all', 'day', 'week', 'month'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

/** Back-to-back periods of `<n>h` (absolute), `<n>d` or `<n>w` (local wall time kept) from `anchor`. */
export interface EverySchedule {
  every: string;
  /** ISO instant on a whole minute (keys name minutes). */
  anchor: string;
}
/** A period runs from one tick of a 5-field cron expression (in the board's timezone) to the next. */
export interface CronSchedule {
  cron: string;
}
export type PeriodSpec = PeriodKind | EverySchedule | CronSchedule;

/** The instants a board accepts events in: `[startsAt, endsAt)`, either end open when absent. */
export interface BoardWindow {
  startsAt?: string;
  endsAt?: string;
}

/** What decides a board's periods: its schedule, its timezone, and the end of its window (an `all` period ends there). */
export interface PeriodRules {
  period: PeriodSpec;
  timezone: string;
  window?: BoardWindow | null;
}

/** Whether `at` lies outside the board's window (an event there is rejected `outside_window`). */
export function outsideWindow(window: BoardWindow | null | undefined, at: Date): boolean {
  if (!window) return false;
  const ms = at.getTime();
  return (
    (window.startsAt !== undefined && ms < Date.parse(window.startsAt)) ||
    (window.endsAt !== undefined && ms >= Date.parse(window.endsAt))
  );
}

/** Whether a period shares any instant with the board's window (no period is created outside it). */
export function overlapsWindow(
  window: BoardWindow | null | undefined,
  period: { startsAt: Date; endsAt: Date | null },
): boolean {
  if (!window) return true;
  if (window.endsAt !== undefined && period.startsAt.getTime() >= Date.parse(window.endsAt)) return false;
  return !(
    window.startsAt !== undefined &&
    period.endsAt !== null &&
    period.endsAt.getTime() <= Date.parse(window.startsAt)
  );
}

/** One category of one period of a board: what a scope rebuild refills (its world and region scopes). */
export interface PeriodCategory {
  board: string;
  period: string;
  category: string;
}

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
 * The last window computed per (schedule, timezone). Periods partition time, so an instant inside
 * a known window belongs to it: the Luxon work (tens to hundreds of microseconds, paid by
 * every `period=current` read and every routed event) runs once per period boundary.
 */
const lastWindow = new Map<string, { key: string; starts: number; ends: number }>();

/**
 * The board's current period: the one containing `now`, or null outside the board's window
 * (before a tournament starts and once it has ended, nothing is current).
 */
export function currentPeriodOf(rules: PeriodRules, now: Date): PeriodWindow | null {
  return outsideWindow(rules.window, now) ? null : periodContaining(rules, now);
}

/**
 * The period a member registering at `now` enters: the current one, or before the window
 * opens its first period (players register before their first run). Null once it has ended.
 */
export function registrationPeriodOf(rules: PeriodRules, now: Date): PeriodWindow | null {
  const startsAt = rules.window?.startsAt;
  if (startsAt !== undefined && now.getTime() < Date.parse(startsAt))
    return periodContaining(rules, new Date(startsAt));
  return currentPeriodOf(rules, now);
}

/** The board's period that contains `at`, with boundaries computed in its timezone. */
export function periodContaining(rules: PeriodRules, at: Date): PeriodWindow {
  const { period, timezone } = rules;
  if (period === 'all') {
    // A one-off event: the `all` period is the window (when there is one), so it starts with
    // it and closes at its end like any other period.
    const { startsAt, endsAt } = rules.window ?? {};
    return {
      key: 'all',
      startsAt: startsAt ? new Date(startsAt) : ALL_STARTS_AT,
      endsAt: endsAt ? new Date(endsAt) : null,
    };
  }
  const ms = at.getTime();
  const memoKey = `${specId(period)}|${timezone}`;
  const known = lastWindow.get(memoKey);
  if (known && ms >= known.starts && ms < known.ends) {
    return { key: known.key, startsAt: new Date(known.starts), endsAt: new Date(known.ends) };
  }
  const window =
    typeof period === 'string'
      ? computePeriodContaining(period, timezone, at)
      : scheduledPeriodContaining(period, timezone, at);
  // Bounded: one entry per (schedule, timezone) in use.
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
 * The period a key names, or null when the key is not a valid key for this board's schedule
 * (a key that parses but names no real day, week, month or period start is invalid too).
 */
export function periodForKey(rules: PeriodRules, key: string): PeriodWindow | null {
  const { period, timezone } = rules;
  if (typeof period !== 'string') {
    if (!SCHEDULED_KEY.test(key)) return null;
    const start = DateTime.fromFormat(key, SCHEDULED_KEY_FORMAT, { zone: 'UTC' });
    if (!start.isValid) return null;
    const window = periodContaining(rules, start.toJSDate());
    return window.key === key ? window : null;
  }
  if (!KEY_PATTERNS[period].test(key)) return null;
  if (period === 'all') return periodContaining(rules, ALL_STARTS_AT);
  const format = period === 'day' ? 'yyyy-MM-dd' : period === 'week' ? "kkkk-'W'WW" : 'yyyy-MM';
  const start = DateTime.fromFormat(key, format, { zone: timezone });
  if (!start.isValid) return null;
  const window = periodContaining(rules, start.toJSDate());
  return window.key === key ? window : null;
}

/** Key of a scheduled period: its start in UTC, to the minute (docs/design/periods.md). */
const SCHEDULED_KEY_FORMAT = "yyyyMMdd'T'HHmm'Z'";
const SCHEDULED_KEY = /^\d{8}T\d{4}Z$/;
const EVERY = /^([1-9]\d{0,3})([hdw])$/;
const MINUTE_MS = 60_000;

/** One string per distinct schedule, for memo keys and equality (anchors compare as instants). */
export function specId(period: PeriodSpec): string {
  if (typeof period === 'string') return period;
  if ('cron' in period) return `cron:${period.cron.trim().split(/\s+/).join(' ')}`;
  return `every:${period.every}@${new Date(period.anchor).toISOString()}`;
}

/** Why `every` is not a period length, or null when it is one. */
export function everyProblem(every: string): string | null {
  return EVERY.test(every) ? null : 'must be <n>h, <n>d or <n>w with n from 1 to 9999';
}

/** Why `anchor` cannot anchor periods, or null when it can. */
export function anchorProblem(anchor: string): string | null {
  const ms = Date.parse(anchor);
  if (Number.isNaN(ms)) return 'must be an ISO 8601 instant';
  return ms % MINUTE_MS === 0 ? null : 'must be on a whole minute (period keys name minutes)';
}

/** Why `cron` cannot make periods, or null when it can: five fields, and ticks both ways in time. */
export function cronProblem(cron: string, timezone = 'UTC'): string | null {
  if (cron.trim().split(/\s+/).length !== 5) return 'must be a 5-field cron expression (minute hour day month weekday)';
  try {
    const probe = new Date(Date.UTC(2026, 0, 1));
    cronTicksAround(cron, timezone, probe);
    return null;
  } catch (err) {
    return `not a usable cron expression: ${(err as Error).message}`;
  }
}

function scheduledPeriodContaining(period: EverySchedule | CronSchedule, timezone: string, at: Date): PeriodWindow {
  const [start, end] =
    'cron' in period ? cronTicksAround(period.cron, timezone, at) : everyBoundsAround(period, timezone, at);
  return {
    key: DateTime.fromJSDate(start, { zone: 'UTC' }).toFormat(SCHEDULED_KEY_FORMAT),
    startsAt: start,
    endsAt: end,
  };
}

function everyBoundsAround(period: EverySchedule, timezone: string, at: Date): [Date, Date] {
  const [, n, unit] = EVERY.exec(period.every)!;
  const anchorMs = Date.parse(period.anchor);
  if (unit === 'h') {
    const length = Number(n) * 3_600_000;
    const i = Math.floor((at.getTime() - anchorMs) / length);
    return [new Date(anchorMs + i * length), new Date(anchorMs + (i + 1) * length)];
  }
  // Days and weeks keep the anchor's wall time across DST: count in local calendar days.
  const days = Number(n) * (unit === 'w' ? 7 : 1);
  const anchor = DateTime.fromMillis(anchorMs, { zone: timezone });
  const startOf = (i: number) => anchor.plus({ days: i * days }).toMillis();
  // A DST shift moves a boundary by an hour at most: the estimate is off by one period at most.
  let i = Math.floor((at.getTime() - anchorMs) / (days * 86_400_000));
  while (startOf(i) > at.getTime()) i -= 1;
  while (startOf(i + 1) <= at.getTime()) i += 1;
  return [new Date(startOf(i)), new Date(startOf(i + 1))];
}

/** The last tick at or before `at` and the first after it. Throws when the expression has none. */
function cronTicksAround(cron: string, timezone: string, at: Date): [Date, Date] {
  // Ticks are whole minutes: the tick at `at`'s minute, if any, starts the period.
  const minuteAfter = new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS);
  const back = CronExpressionParser.parse(cron, { currentDate: minuteAfter, tz: timezone, strict: false });
  const start = back.prev().toDate();
  const forward = CronExpressionParser.parse(cron, { currentDate: start, tz: timezone, strict: false });
  return [start, forward.next().toDate()];
}
