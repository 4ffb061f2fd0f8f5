import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LUA_DIR, loadLua } from '../../src/storage/redis/scripts.js';

const scripts = readdirSync(LUA_DIR).filter((f) => f.endsWith('.lua'));
const libs = readdirSync(path.join(LUA_DIR, 'lib')).filter((f) => f.endsWith('.lua'));

/** The comment block a file opens with (its header), not comments further down. */
function header(file: string): string {
  const lines = readFileSync(path.join(LUA_DIR, file), 'utf8').split('\n');
  const end = lines.findIndex((l) => !l.startsWith('--'));
  return lines.slice(0, end === -1 ? lines.length : end).join('\n');
}

describe('Lua scripts', () => {
  it('document their KEYS and ARGV layout in a header comment', () => {
    expect(scripts.length).toBeGreaterThan(0);
    for (const file of scripts) {
      expect(header(file), file).toMatch(/KEYS\[1\]/);
      expect(header(file), file).toMatch(/ARGV\[1\]/);
      expect(header(file), file).toMatch(/Returns/);
    }
  });

  it("name in each shared part's header exactly the scripts that include it", () => {
    expect(libs.length).toBeGreaterThan(0);
    for (const lib of libs) {
      const includers = scripts.filter((s) =>
        readFileSync(path.join(LUA_DIR, s), 'utf8').includes(`--@include lib/${lib}`),
      );
      expect(includers.length, lib).toBeGreaterThan(0);
      const named = new Set(
        scripts.filter((s) => new RegExp(`\\b${s.replace(/\.lua$/, '')}(\\.lua)?\\b`).test(header(`lib/${lib}`))),
      );
      expect([...named].sort(), lib).toEqual(includers.sort());
    }
  });

  it('are loaded with their shared parts in place of the include lines', () => {
    const project = loadLua('project.lua');
    expect(project).not.toMatch(/--@include/);
    expect(project).toContain(readFileSync(path.join(LUA_DIR, 'lib/apply-aggregate.lua'), 'utf8'));
    const place = loadLua('place.lua');
    expect(place.indexOf('local function entryOf')).toBeGreaterThan(
      place.indexOf("redis.call('HEXISTS', KEYS[3], ARGV[1])"),
    );
  });
});
