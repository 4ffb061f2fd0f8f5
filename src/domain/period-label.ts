import { DateTime } from 'luxon';
import type { PeriodKind } from './period.js';

/** How a period is named to players: "December 2026", "Week 49, 2026", "2 December 2026". */
export function periodLabel(kind: PeriodKind, startsAt: Date, timezone: string): string {
  const start = DateTime.fromJSDate(startsAt, { zone: timezone }).setLocale('en');
  switch (kind) {
    case 'month':
      return start.toFormat('LLLL yyyy');
    case 'week':
      return `Week ${start.weekNumber}, ${start.weekYear}`;
    case 'day':
      return start.toFormat('d LLLL yyyy');
    case 'all':
      return 'All time';
  }
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 112th... */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}
