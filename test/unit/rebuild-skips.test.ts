import { describe, expect, it } from 'vitest';
import { rebuildSkips } from '../../src/services/rebuild-service.js';

const HOUR = 3_600_000;
const now = new Date('2026-12-10T00:00:00Z');
const closedHoursAgo = (hours: number) => ({ state: 'closed', closedAt: new Date(now.getTime() - hours * HOUR) });

describe('which scope rebuilds leave their period alone', () => {
  it('rebuilds open and closing periods whatever asked', () => {
    for (const state of ['open', 'closing']) {
      for (const trigger of ['read', 'projection', 'moderation', 'startup', 'api', 'cli', undefined]) {
        expect(rebuildSkips({ state, closedAt: null }, trigger, now, 168), `${state} ${trigger}`).toBeNull();
      }
    }
  });

  it('skips a closed period unless an operator asked (the admin API or the CLI)', () => {
    for (const trigger of ['read', 'projection', 'moderation', 'startup', undefined]) {
      expect(rebuildSkips(closedHoursAgo(1), trigger, now, 168), String(trigger)).toBe('closed');
    }
    expect(rebuildSkips(closedHoursAgo(1), 'api', now, 168)).toBeNull();
    expect(rebuildSkips(closedHoursAgo(167), 'cli', now, 168)).toBeNull();
  });

  it('skips a retired period whoever asked', () => {
    for (const trigger of ['read', 'api', 'cli']) {
      expect(rebuildSkips(closedHoursAgo(168), trigger, now, 168), trigger).toBe('retired');
    }
    expect(rebuildSkips(closedHoursAgo(2), 'api', now, 1)).toBe('retired');
  });
});
