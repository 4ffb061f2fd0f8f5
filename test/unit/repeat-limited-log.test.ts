import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { RepeatLimitedLog } from '../../src/observability/repeat-limited-log.js';

describe('repeat-limited dependency log', () => {
  it('writes one line per dependency per interval, then the count of what it held back', () => {
    const lines: any[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) });
    let now = 0;
    const log = new RepeatLimitedLog(createLogger('info', sink), 10_000, () => now);
    for (let i = 0; i < 50; i += 1) log.warn('queue-redis', new Error('ECONNREFUSED'), 'redis connection error');
    log.warn('postgres', 'timeout', 'query failed');
    now = 9_999;
    log.warn('queue-redis', new Error('ECONNREFUSED'), 'redis connection error');
    now = 10_000;
    log.warn('queue-redis', new Error('ECONNREFUSED'), 'redis connection error');
    expect(lines.map((l) => [l.dependency, l.repeated])).toEqual([
      ['queue-redis', undefined],
      ['postgres', undefined],
      ['queue-redis', 50],
    ]);
  });
});
