import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LUA_DIR, loadLua } from '../../src/storage/redis/scripts.js';

const scripts = readdirSync(LUA_DIR).filter((f) => f.endsWith('.lua'));

describe('Lua scripts', () => {
  it('document their KEYS and ARGV layout in a header comment', () => {
    expect(scripts.length).toBeGreaterThan(0);
    for (const file of scripts) {
      const header = readFileSync(path.join(LUA_DIR, file), 'utf8').split('\n').filter((l) => l.startsWith('--')).join('\n');
      expect(header, file).toMatch(/KEYS\[1\]/);
      expect(header, file).toMatch(/ARGV\[1\]/);
      expect(header, file).toMatch(/Returns/);
    }
  });

  it('are loaded with their shared parts in place of the include lines', () => {
    const project = loadLua('project.lua');
    expect(project).not.toMatch(/--@include/);
    expect(project).toContain(readFileSync(path.join(LUA_DIR, 'lib/apply-aggregate.lua'), 'utf8'));
    const place = loadLua('place.lua');
    expect(place.indexOf('local function entryOf')).toBeGreaterThan(place.indexOf("redis.call('HEXISTS', KEYS[3], ARGV[1])"));
  });
});
