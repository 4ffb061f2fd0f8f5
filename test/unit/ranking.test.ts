import { describe, expect, it } from 'vitest';
import {
  decodeEntry,
  encodeEntry,
  placement,
  rankKeyOfEntry,
  scaledFromSortScore,
  sortScore,
  subscoreOfEntry,
} from '../../src/domain/ranking.js';

describe('sorted-set entries', () => {
  it('order equal scores by reached second, then member bytes, as Redis compares them', () => {
    const first = [
      encodeEntry('first', 200, 'b'),
      encodeEntry('first', 100, 'z'),
      encodeEntry('first', 200, 'a'),
      encodeEntry('first', 200, 'B'),
    ];
    expect([...first].sort().map((e) => decodeEntry('first', e))).toEqual(['z', 'B', 'a', 'b']);
    const last = [encodeEntry('last', 100, 'a'), encodeEntry('last', 200, 'b'), encodeEntry('last', 200, 'a')];
    expect([...last].sort().map((e) => decodeEntry('last', e))).toEqual(['a', 'b', 'a']);
    expect(encodeEntry('member', 5, 'm:1')).toBe('m:1');
  });

  it('put the subscore before the tie rule, exactly at the ends of ±2^40, in either order', () => {
    const big = 2n ** 40n;
    for (const order of ['desc', 'asc'] as const) {
      const rule = { order };
      const subs = [big, -big, 0n, 1n, -1n, big - 1n];
      const entries = subs.map((scaled, i) => encodeEntry('first', 100 - i, `m${i}`, { rule, scaled }));
      const sorted = [...entries].sort();
      const expected = [...subs].sort((a, b) => (order === 'desc' ? (a > b ? -1 : 1) : a < b ? -1 : 1)).map(Number);
      expect(sorted.map((e) => subscoreOfEntry(rule, e))).toEqual(expected);
      for (const [i, e] of entries.entries()) {
        expect(decodeEntry('first', e, rule)).toBe(`m${i}`);
        expect(rankKeyOfEntry(rule, e)).toHaveLength(13);
      }
      expect(() => encodeEntry('member', 0, 'x', { rule, scaled: big + 1n })).toThrow(RangeError);
    }
    // Equal subscores: the tie rule decides, as without one.
    const rule = { order: 'desc' as const };
    const tied = [
      encodeEntry('last', 100, 'a', { rule, scaled: 5n }),
      encodeEntry('last', 200, 'b', { rule, scaled: 5n }),
      encodeEntry('last', 1, 'c', { rule, scaled: 6n }),
    ];
    expect([...tied].sort().map((e) => decodeEntry('last', e, rule))).toEqual(['c', 'b', 'a']);
    expect(subscoreOfEntry(null, 'a')).toBeNull();
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
