import { DateTime } from 'luxon';
import type { Board } from './board.js';

/**
 * How a period is named to players: "December 2026", "Week 49, 2026", "2 December 2026";
 * a scheduled period by its start in the board's timezone: "Week of 4 Dec 18:00",
 * "Day of 4 Dec 18:00", or "4 Dec 17:00 – 18:00" for any other length. An `all` board has
 * one period, which only a window or an operator ends (a tournament): it is the board
 * itself, named by its display name ("Winter Cup").
 */
export function periodLabel(
  board: Pick<Board, 'period' | 'timezone' | 'displayName'>,
  period: { startsAt: Date; endsAt: Date | null },
): string {
  const { period: spec, timezone } = board;
  const start = DateTime.fromJSDate(period.startsAt, { zone: timezone }).setLocale('en');
  if (typeof spec !== 'string')
    return scheduledLabel(
      start,
      period.endsAt ? DateTime.fromJSDate(period.endsAt, { zone: timezone }).setLocale('en') : null,
    );
  switch (spec) {
    case 'month':
      return start.toFormat('LLLL yyyy');
    case 'week':
      return `Week ${start.weekNumber}, ${start.weekYear}`;
    case 'day':
      return start.toFormat('d LLLL yyyy');
    case 'all':
      return board.displayName;
  }
}

function scheduledLabel(start: DateTime, end: DateTime | null): string {
  const at = start.toFormat('d LLL HH:mm');
  // Calendar lengths in local time: a week across a DST change is still a week.
  if (end && end.equals(start.plus({ weeks: 1 }))) return `Week of ${at}`;
  if (end && end.equals(start.plus({ days: 1 }))) return `Day of ${at}`;
  if (!end) return `From ${at}`;
  return `${at} – ${end.hasSame(start, 'day') ? end.toFormat('HH:mm') : end.toFormat('d LLL HH:mm')}`;
}
