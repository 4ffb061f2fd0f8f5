import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';

const base = {
  DATABASE_URL: 'postgres://u@h/db',
  REDIS_URL: 'redis://127.0.0.1:6379',
  ADMIN_API_KEY: 'a-long-enough-admin-key-0123456789abcdef',
};

describe('parseEnv', () => {
  it('applies defaults', () => {
    expect(parseEnv(base)).toMatchObject({
      PORT: 3000,
      PUBLIC_READS: false,
      WORKER_CONCURRENCY: 4,
      LOG_LEVEL: 'info',
      REDIS_PREFIX: 'laurel',
    });
  });

  it('names the missing or invalid variable in one line', () => {
    expect(() => parseEnv({ ...base, DATABASE_URL: undefined })).toThrow(
      'invalid environment: DATABASE_URL is required',
    );
    expect(() => parseEnv({ ...base, REDIS_URL: 'http://x' })).toThrow(
      /^invalid environment: REDIS_URL must be a redis:\/\//,
    );
    expect(() => parseEnv({ ...base, PORT: 'eighty' })).toThrow(/^invalid environment: PORT /);
    expect(() => parseEnv({ ...base, PUBLIC_READS: 'maybe' })).toThrow(/^invalid environment: PUBLIC_READS /);
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'short' })).toThrow(
      /^invalid environment: ADMIN_API_KEY must be at least 32 characters/,
    );
  });

  it('refuses a guessable ADMIN_API_KEY: short, with whitespace, or one character repeated', () => {
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'password12345678' })).toThrow(
      /ADMIN_API_KEY must be at least 32 characters/,
    );
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: ' '.repeat(40) })).toThrow(
      'invalid environment: ADMIN_API_KEY must not contain whitespace',
    );
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'a-long-enough-admin-key 0123456789' })).toThrow(
      'ADMIN_API_KEY must not contain whitespace',
    );
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'x'.repeat(40) })).toThrow(
      'invalid environment: ADMIN_API_KEY must not be one character repeated',
    );
    expect(parseEnv({ ...base, ADMIN_API_KEY: '0123456789abcdef0123456789abcdef' }).ADMIN_API_KEY).toHaveLength(32);
  });

  it('reads rate limits and the proxy setting, 0 turning a limit off', () => {
    expect(parseEnv(base)).toMatchObject({
      RATE_LIMIT_PER_KEY: 5000,
      RATE_LIMIT_PER_IP: 600,
      RATE_LIMIT_WINDOW_SECONDS: 10,
      TRUST_PROXY: false,
    });
    expect(parseEnv({ ...base, RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_IP: '0' })).toMatchObject({
      RATE_LIMIT_PER_KEY: 0,
      RATE_LIMIT_PER_IP: 0,
    });
    expect(parseEnv({ ...base, TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(() => parseEnv({ ...base, TRUST_PROXY: 'true' })).toThrow(
      /^invalid environment: TRUST_PROXY must not be true .*number of proxy hops.*addresses/,
    );
    expect(parseEnv({ ...base, TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY).toBe('loopback, 10.0.0.0/8');
  });

  it('refuses a TRUST_PROXY Express could not use with the one-line error, true in any case included', () => {
    for (const value of ['TRUE', 'True', 'true']) {
      expect(() => parseEnv({ ...base, TRUST_PROXY: value }), value).toThrow(
        /^invalid environment: TRUST_PROXY must not be true /,
      );
    }
    for (const value of ['yes', 'on', '10.0.0.0/33', '10.0.0.1,', 'loopback, nonsense', '1.5']) {
      expect(() => parseEnv({ ...base, TRUST_PROXY: value }), value).toThrow(
        /^invalid environment: TRUST_PROXY must be false, a number of proxy hops .* or comma-separated addresses and subnets/,
      );
    }
    expect(parseEnv({ ...base, TRUST_PROXY: 'FALSE' }).TRUST_PROXY).toBe(false);
    expect(parseEnv({ ...base, TRUST_PROXY: '0' }).TRUST_PROXY).toBe(0);
    for (const value of [
      '10.0.0.1',
      '::1',
      'fd00::/8',
      'loopback, linklocal, uniquelocal',
      '192.168.0.0/255.255.0.0',
    ]) {
      expect(parseEnv({ ...base, TRUST_PROXY: value }).TRUST_PROXY, value).toBe(value);
    }
    expect(() => parseEnv({ ...base, RATE_LIMIT_PER_KEY: '-1' })).toThrow(/^invalid environment: RATE_LIMIT_PER_KEY /);
    expect(() => parseEnv({ ...base, RATE_LIMIT_WINDOW_SECONDS: '0' })).toThrow(
      /^invalid environment: RATE_LIMIT_WINDOW_SECONDS /,
    );
  });

  it('reads the HTTP server limits, with defaults, a request timeout no shorter than the headers one', () => {
    expect(parseEnv(base)).toMatchObject({
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 30_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000,
      HTTP_MAX_CONNECTIONS: 16_384,
      BULL_BOARD_WRITE: false,
    });
    expect(parseEnv({ ...base, HTTP_MAX_CONNECTIONS: '10', HTTP_REQUEST_TIMEOUT_MS: '60000' })).toMatchObject({
      HTTP_MAX_CONNECTIONS: 10,
      HTTP_REQUEST_TIMEOUT_MS: 60_000,
    });
    expect(() => parseEnv({ ...base, HTTP_MAX_CONNECTIONS: '0' })).toThrow(
      /^invalid environment: HTTP_MAX_CONNECTIONS /,
    );
    expect(() => parseEnv({ ...base, HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      'invalid environment: HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS',
    );
  });

  it('takes a comma-separated list of seed nodes only for a Redis Cluster, on database 0', () => {
    const seeds = 'redis://10.0.0.1:7000,redis://10.0.0.2:7000';
    expect(parseEnv({ ...base, REDIS_URL: seeds, REDIS_CLUSTER: 'true' })).toMatchObject({
      REDIS_URL: seeds,
      REDIS_CLUSTER: true,
    });
    expect(parseEnv(base)).toMatchObject({ REDIS_CLUSTER: false });
    expect(() => parseEnv({ ...base, REDIS_URL: seeds })).toThrow(
      /^invalid environment: REDIS_URL holds several URLs; set the matching \*_CLUSTER=true/,
    );
    expect(() => parseEnv({ ...base, REDIS_URL: 'redis://h:7000/3', REDIS_CLUSTER: 'true' })).toThrow(
      /^invalid environment: REDIS_URL must not name a database/,
    );
    expect(() => parseEnv({ ...base, REDIS_URL: 'redis://h:7000,http://x', REDIS_CLUSTER: 'true' })).toThrow(
      /^invalid environment: REDIS_URL must be a redis:\/\//,
    );
    expect(parseEnv({ ...base, LEADERBOARD_REDIS_URL: seeds, LEADERBOARD_REDIS_CLUSTER: 'yes' })).toMatchObject({
      LEADERBOARD_REDIS_CLUSTER: true,
      REDIS_CLUSTER: false,
    });
    expect(() => parseEnv({ ...base, LEADERBOARD_REDIS_URL: seeds })).toThrow(
      /^invalid environment: LEADERBOARD_REDIS_URL holds several URLs/,
    );
    expect(() => parseEnv({ ...base, LEADERBOARD_REDIS_CLUSTER: 'true' })).toThrow(
      /^invalid environment: LEADERBOARD_REDIS_CLUSTER needs LEADERBOARD_REDIS_URL/,
    );
    expect(() => parseEnv({ ...base, REDIS_CLUSTER: 'sometimes' })).toThrow(/^invalid environment: REDIS_CLUSTER /);
  });
});
