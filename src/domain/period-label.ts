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
