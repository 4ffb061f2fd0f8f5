import { describe, expect, it } from 'vitest';
import { periodContaining, periodForKey } from '../../src/domain/period.js';

const at = (iso: string) => new Date(iso);

describe('periodContaining', () => {
  it('computes day, ISO week and month keys in the board timezone', () => {
    expect(periodContaining({ period: 'day', timezone: 'UTC' }, at('2026-12-02T23:59:59Z')).key).toBe('2026-12-02');
    expect(periodContaining({ period: 'day', timezone: 'Asia/Tokyo' }, at('2026-12-02T15:00:00Z')).key).toBe(
      '2026-12-03',
    );
    expect(periodContaining({ period: 'day', timezone: 'America/Los_Angeles' }, at('2026-12-02T07:59:59Z')).key).toBe(
      '2026-12-01',
    );
    // ISO weeks start on Monday; early-January days can belong to the previous ISO year.
    expect(periodContaining({ period: 'week', timezone: 'UTC' }, at('2027-01-03T12:00:00Z')).key).toBe('2026-W53');
    expect(periodContaining({ period: 'week', timezone: 'UTC' }, at('2027-01-04T00:00:00Z')).key).toBe('2027-W01');
    expect(periodContaining({ period: 'week', timezone: 'UTC' }, at('2025-12-29T00:00:00Z')).key).toBe('2026-W01');
    expect(periodContaining({ period: 'month', timezone: 'Europe/Paris' }, at('2026-11-30T23:30:00Z')).key).toBe(
      '2026-12',
    );
    expect(periodContaining({ period: 'all', timezone: 'Europe/Paris' }, at('2026-11-30T23:30:00Z'))).toMatchObject({
      key: 'all',
      endsAt: null,
    });
  });

  it('answers instants in any order, repeated or not, with the window that contains each (the memo never leaks)', () => {
    // Paris, around the spring change (2026-03-29: a 23-hour day starting 23:00Z on the 28th).
    const expected: Array<[string, string, string, string]> = [
      ['2026-03-28T22:59:59Z', '2026-03-28', '2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z'],
      ['2026-03-28T23:00:00Z', '2026-03-29', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
      ['2026-03-29T21:59:59Z', '2026-03-29', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
      ['2026-03-29T22:00:00Z', '2026-03-30', '2026-03-29T22:00:00.000Z', '2026-03-30T22:00:00.000Z'],
    ];
    for (const order of [
      [0, 1, 2, 3],
      [3, 2, 1, 0],
      [1, 3, 0, 2, 2, 1],
    ]) {
      for (const i of order) {
        const [instant, key, startsAt, endsAt] = expected[i]!;
        const window = periodContaining({ period: 'day', timezone: 'Europe/Paris' }, at(instant));
        expect({
          key: window.key,
          startsAt: window.startsAt.toISOString(),
          endsAt: window.endsAt?.toISOString(),
        }).toEqual({ key, startsAt, endsAt });
        // Same instant in another zone: a separate window.
        expect(periodContaining({ period: 'day', timezone: 'Asia/Tokyo' }, at(instant)).key).toBe(
          instant < '2026-03-29T15:00:00Z'
            ? instant < '2026-03-28T15:00:00Z'
              ? '2026-03-28'
              : '2026-03-29'
            : '2026-03-30',
        );
      }
    }
  });

  it('gives exact boundaries across daylight-saving changes', () => {
    const march = periodContaining({ period: 'day', timezone: 'Europe/Paris' }, at('2026-03-29T12:00:00Z'));
    expect(march.startsAt.toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(march.endsAt!.toISOString()).toBe('2026-03-29T22:00:00.000Z'); // a 23-hour day
    const week = periodContaining({ period: 'week', timezone: 'Europe/Paris' }, at('2026-12-02T12:00:00Z'));
    expect([week.startsAt.toISOString(), week.endsAt!.toISOString()]).toEqual([
      '2026-11-29T23:00:00.000Z',
      '2026-12-06T23:00:00.000Z',
    ]);
  });
});

describe('periodForKey', () => {
  it('accepts only real keys of the board kind', () => {
    expect(periodForKey({ period: 'month', timezone: 'UTC' }, '2026-02')?.endsAt?.toISOString()).toBe(
      '2026-03-01T00:00:00.000Z',
    );
    expect(periodForKey({ period: 'week', timezone: 'UTC' }, '2026-W53')?.startsAt.toISOString()).toBe(
      '2026-12-28T00:00:00.000Z',
    );
    expect(periodForKey({ period: 'week', timezone: 'UTC' }, '2025-W53')).toBeNull(); // 2025 has 52 ISO weeks
    expect(periodForKey({ period: 'day', timezone: 'UTC' }, '2026-02-30')).toBeNull();
    expect(periodForKey({ period: 'day', timezone: 'UTC' }, '2026-02')).toBeNull();
    expect(periodForKey({ period: 'month', timezone: 'UTC' }, '2026-13')).toBeNull();
    expect(periodForKey({ period: 'all', timezone: 'UTC' }, 'all')?.key).toBe('all');
    expect(periodForKey({ period: 'all', timezone: 'UTC' }, 'current')).toBeNull();
  });
});
