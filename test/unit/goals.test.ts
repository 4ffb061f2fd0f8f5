import { describe, expect, it } from 'vitest';
import { neededToPass, type GoalRules } from '../../src/domain/goals.js';

const rules = (over: Partial<GoalRules> = {}): GoalRules => ({
  order: 'desc',
  tieBreak: 'first',
  subscore: null,
  ...over,
});
const target = { member: 'm', scaled: 500 };

describe('the score needed to pass a target', () => {
  it('is one unit better under first: reaching it now is later than the target', () => {
    expect(neededToPass(rules(), { member: 'a', ranked: true }, target)).toBe(501);
    expect(neededToPass(rules({ order: 'asc' }), { member: 'a', ranked: true }, target)).toBe(499);
  });

  it('is the equal score under last and shared, ranked or not', () => {
    for (const tieBreak of ['last', 'shared'] as const)
      for (const order of ['desc', 'asc'] as const)
        for (const ranked of [true, false])
          expect(neededToPass(rules({ tieBreak, order }), { member: 'z', ranked }, target)).toBe(500);
  });

  it('under member, is equal only for an id whose bytes sort before the target', () => {
    const byMember = rules({ tieBreak: 'member' });
    expect(neededToPass(byMember, { member: 'a', ranked: true }, target)).toBe(500);
    expect(neededToPass(byMember, { member: 'n', ranked: true }, target)).toBe(501);
    // Upper case sorts before lower case in byte order.
    expect(neededToPass(byMember, { member: 'Z', ranked: false }, target)).toBe(500);
    expect(neededToPass(rules({ tieBreak: 'member', order: 'asc' }), { member: 'mm', ranked: true }, target)).toBe(499);
  });

  it('with a subscore, lets the current subscore decide before the tie rule', () => {
    const desc = { order: 'desc' as const };
    const withSub = { ...target, subscore: 10 };
    for (const tieBreak of ['first', 'last', 'member', 'shared'] as const) {
      const r = rules({ tieBreak, subscore: desc });
      expect(neededToPass(r, { member: 'z', ranked: true, subscore: 11 }, withSub), tieBreak).toBe(500);
      expect(neededToPass(r, { member: 'a', ranked: true, subscore: 9 }, withSub), tieBreak).toBe(501);
      // No score, no subscore to order the member ahead.
      expect(neededToPass(r, { member: 'a', ranked: false }, withSub), tieBreak).toBe(501);
    }
    const asc = rules({ tieBreak: 'last', subscore: { order: 'asc' } });
    expect(neededToPass(asc, { member: 'a', ranked: true, subscore: 9 }, withSub)).toBe(500);
    expect(neededToPass(asc, { member: 'a', ranked: true, subscore: 11 }, withSub)).toBe(501);
  });

  it('with equal subscores, falls back to the tie rule', () => {
    const withSub = { ...target, subscore: 3 };
    const r = (tieBreak: GoalRules['tieBreak']) => rules({ tieBreak, subscore: { order: 'asc' } });
    expect(neededToPass(r('first'), { member: 'a', ranked: true, subscore: 3 }, withSub)).toBe(501);
    expect(neededToPass(r('last'), { member: 'z', ranked: true, subscore: 3 }, withSub)).toBe(500);
    expect(neededToPass(r('shared'), { member: 'z', ranked: true, subscore: 3 }, withSub)).toBe(500);
    expect(neededToPass(r('member'), { member: 'a', ranked: true, subscore: 3 }, withSub)).toBe(500);
    expect(neededToPass(r('member'), { member: 'z', ranked: true, subscore: 3 }, withSub)).toBe(501);
  });

  it('stays exact at the ends of the supported range', () => {
    const big = 2 ** 40;
    expect(neededToPass(rules(), { member: 'a', ranked: true }, { member: 'b', scaled: big })).toBe(big + 1);
    expect(neededToPass(rules({ order: 'asc' }), { member: 'a', ranked: true }, { member: 'b', scaled: -big })).toBe(
      -big - 1,
    );
  });
});
