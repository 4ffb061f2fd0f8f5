import { describe, expect, it } from 'vitest';
import { percentFraction, positionOfFraction } from '../../src/domain/cutoffs.js';

const position = (total: number, percent: string) => positionOfFraction(total, percentFraction(percent)!);

describe('cutoff positions', () => {
  it('read percents in (0, 100] with up to four decimals, exactly', () => {
    expect(percentFraction('12.5')).toEqual({ numerator: 125n, denominator: 1000n });
    expect(percentFraction('100')).toEqual({ numerator: 100n, denominator: 100n });
    expect(percentFraction('0.0001')).toEqual({ numerator: 1n, denominator: 1_000_000n });
    for (const bad of ['0', '0.0', '100.01', '101', '-1', '1e2', '', '.5', '5.', '1.23456', ' 5', 'abc'])
      expect(percentFraction(bad), bad).toBeNull();
  });

  it('name the last place in the top p%: max(1, ceil(total × p / 100))', () => {
    expect(position(0, '50')).toBe(1);
    expect(position(1, '1')).toBe(1);
    expect(position(200, '1')).toBe(2);
    expect(position(201, '1')).toBe(3);
    expect(position(10, '10')).toBe(1);
    expect(position(10, '10.0001')).toBe(2);
    expect(position(3, '33.3333')).toBe(1);
    expect(position(3, '33.3334')).toBe(2);
    expect(position(7, '100')).toBe(7);
  });

  it('stay exact where floating point would not', () => {
    // 0.07 * 100 is 7.000000000000001 in doubles: a float ceiling would say 8.
    expect(position(100, '7')).toBe(7);
    expect(position(1_000_000_000, '0.0001')).toBe(1000);
    expect(position(9_000_000_000, '99.9999')).toBe(8_999_991_000);
  });
});
