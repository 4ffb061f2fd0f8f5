import { describe, expect, it } from 'vitest';
import { histogramPercentile, lagBucket, lagCounts, startOfHour } from '../../src/domain/lag-histogram.js';

describe('lag histograms', () => {
  it('keep lags under 100 ms as they are and round longer ones to two significant figures', () => {
    expect([0, 1.4, 99, 100, 104, 105, 1234, 1250, 56_789, -3].map(lagBucket)).toEqual([
      0, 1, 99, 100, 100, 110, 1200, 1300, 57_000, 0,
    ]);
  });

  it('answer the nearest-rank percentile, null when empty', () => {
    const lags = [...Array<number>(98).fill(250), 4000, 4000];
    const counts = lagCounts(lags);
    expect([...counts.entries()]).toEqual([
      [250, 98],
      [4000, 2],
    ]);
    expect(histogramPercentile(counts, 0.5)).toBe(250);
    expect(histogramPercentile(counts, 0.98)).toBe(250);
    expect(histogramPercentile(counts, 0.99)).toBe(4000);
    expect(histogramPercentile(lagCounts([7]), 0.99)).toBe(7);
    expect(histogramPercentile(new Map(), 0.5)).toBeNull();
  });

  it('name an hour by its start in UTC', () => {
    expect(new Date(startOfHour(new Date('2026-12-02T10:59:59.999Z'))).toISOString()).toBe('2026-12-02T10:00:00.000Z');
  });
});
