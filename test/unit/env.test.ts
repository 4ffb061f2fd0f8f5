import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';

const base = {
  DATABASE_URL: 'postgres://u@h/db',
  REDIS_URL: 'redis://127.0.0.1:6379',
  ADMIN_API_KEY: 'a-long-enough-admin-key',
};

describe('parseEnv', () => {
  it('applies defaults', () => {
    expect(parseEnv(base)).toMatchObject({ PORT: 3000, PUBLIC_READS: false, WORKER_CONCURRENCY: 4, LOG_LEVEL: 'info', REDIS_PREFIX: 'laurel' });
  });

  it('names the missing or invalid variable in one line', () => {
    expect(() => parseEnv({ ...base, DATABASE_URL: undefined })).toThrow('invalid environment: DATABASE_URL is required');
    expect(() => parseEnv({ ...base, REDIS_URL: 'http://x' })).toThrow(/^invalid environment: REDIS_URL must be a redis:\/\//);
    expect(() => parseEnv({ ...base, PORT: 'eighty' })).toThrow(/^invalid environment: PORT /);
    expect(() => parseEnv({ ...base, PUBLIC_READS: 'maybe' })).toThrow(/^invalid environment: PUBLIC_READS /);
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'short' })).toThrow('invalid environment: ADMIN_API_KEY must be at least 16 characters');
  });
});
