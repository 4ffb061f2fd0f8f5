import { describe, expect, it } from 'vitest';
import { parseBucket, zoneOf } from '../../src/domain/league.js';

const league = { tiers: ['low', 'mid', 'top'], bucketSize: 4, promote: 2, relegate: 2, startTier: 'low' };

describe('league zones', () => {
  it('marks the top promote and the bottom relegate of a full bucket', () => {
    expect([1, 2, 3, 4, 5].map((place) => zoneOf(league, 'mid', place, 5))).toEqual([
      'promote',
      'promote',
      null,
      'relegate',
      'relegate',
    ]);
  });

  it('promotes first in a bucket too small for both, then relegates only those not promoted', () => {
    expect([1, 2, 3].map((place) => zoneOf(league, 'mid', place, 3))).toEqual(['promote', 'promote', 'relegate']);
    expect([1, 2].map((place) => zoneOf(league, 'mid', place, 2))).toEqual(['promote', 'promote']);
  });

  it('moves nobody past either end', () => {
    expect([1, 2, 3, 4, 5].map((place) => zoneOf(league, 'top', place, 5))).toEqual([
      null,
      null,
      null,
      'relegate',
      'relegate',
    ]);
    expect([1, 2, 3, 4, 5].map((place) => zoneOf(league, 'low', place, 5))).toEqual([
      'promote',
      'promote',
      null,
      null,
      null,
    ]);
  });
});

describe('bucket names', () => {
  it('reads <tier>-<n> of a tier of the league, and nothing else', () => {
    expect(
      ['mid-1', 'top-12', 'low-0', 'gold-1', 'mid', 'mid-01', 'mid-1-2'].map((b) => parseBucket(league, b)),
    ).toEqual(['mid', 'top', null, null, null, null, null]);
  });
});
