import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, placement, scaledFromSortScore, sortScore } from '../../src/domain/ranking.js';

describe('sorted-set entries', () => {
  it('order equal scores by reached second, then member bytes, as Redis compares them', () => {
    const first = [encodeEntry('first', 200, 'b'), encodeEntry('first', 100, 'z'), encodeEntry('first', 200, 'a'), encodeEntry('first', 200, 'B')];
    expect([...first].sort().map((e) => decodeEntry('first', e))).toEqual(['z', 'B', 'a', 'b']);
    const last = [encodeEntry('last', 100, 'a'), encodeEntry('last', 200, 'b'), encodeEntry('last', 200, 'a')];
    expect([...last].sort().map((e) => decodeEntry('last', e))).toEqual(['a', 'b', 'a']);
    expect(encodeEntry('member', 5, 'm:1')).toBe('m:1');
  });

  it('maps values so that ascending Redis order is best first', () => {
    expect(sortScore('desc', 5n)).toBe('-5');
    expect(sortScore('desc', 0n)).toBe('0');
    expect(sortScore('asc', -7n)).toBe('-7');
    expect(scaledFromSortScore('desc', '-5')).toBe(5);
    expect(Object.is(scaledFromSortScore('desc', '0'), 0)).toBe(true);
  });

  it('computes percentile and Top N%', () => {
    expect(placement(12, 1000)).toEqual({ rank: 12, total: 1000, percentile: 0.012, topPercent: 1 });
    expect(placement(3, 4)).toMatchObject({ topPercent: 75 });
    expect(placement(1, 1)).toMatchObject({ percentile: 1, topPercent: 100 });
  });
});
