import { describe, expect, it } from 'vitest';
import { scaleDecimalString, scaleNumber, unscale } from '../../src/domain/decimal.js';

describe('scaleNumber', () => {
  it('scales exactly what the client wrote', () => {
    expect(scaleNumber(12.5, 1)).toEqual({ ok: true, scaled: 125n });
    expect(scaleNumber(12.5, 3)).toEqual({ ok: true, scaled: 12500n });
    expect(scaleNumber(0.1, 6)).toEqual({ ok: true, scaled: 100000n });
    expect(scaleNumber(-0, 0)).toEqual({ ok: true, scaled: 0n });
    expect(scaleNumber(-3.25, 2)).toEqual({ ok: true, scaled: -325n });
    expect(scaleNumber(1e-6, 6)).toEqual({ ok: true, scaled: 1n });
    expect(scaleNumber(2 ** 40, 0)).toEqual({ ok: true, scaled: 2n ** 40n });
  });

  it('refuses more decimals than allowed, and anything beyond ±2^40 after scaling', () => {
    expect(scaleNumber(0.125, 2)).toMatchObject({ ok: false, reason: 'has more than 2 decimals' });
    expect(scaleNumber(0.1 + 0.2, 6)).toMatchObject({ ok: false });
    expect(scaleNumber(1e-7, 6)).toMatchObject({ ok: false });
    expect(scaleNumber(2 ** 40 + 1, 0)).toMatchObject({ ok: false });
    expect(scaleNumber(-(2 ** 40) - 1, 0)).toMatchObject({ ok: false });
    expect(scaleNumber(1.1e12, 1)).toMatchObject({ ok: false });
    expect(scaleNumber(1e300, 0)).toMatchObject({ ok: false });
    expect(scaleNumber(Number.NaN, 0)).toMatchObject({ ok: false });
    expect(scaleNumber(Number.POSITIVE_INFINITY, 0)).toMatchObject({ ok: false });
  });

  it('round-trips through unscale to the same double', () => {
    for (const [v, d] of [
      [0.3, 1],
      [12.345678, 6],
      [-1099511.627776, 6],
      [999999.5, 1],
    ] as const) {
      const s = scaleNumber(v, d);
      expect(s.ok).toBe(true);
      if (s.ok) expect(unscale(s.scaled, d)).toBe(v);
    }
  });

  it('reads Postgres numeric strings', () => {
    expect(scaleDecimalString('12.5000', 2)).toBe(1250n);
    expect(scaleDecimalString('-0.001', 3)).toBe(-1n);
    expect(scaleDecimalString('0.001', 2)).toBeNull();
  });
});
