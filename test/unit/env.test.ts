import { describe, expect, it } from 'vitest';
import { parseEnv, streamsMax } from '../../src/config/env.js';

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

  it('refuses a guessable ADMIN_API_KEY: short, with whitespace, or under about 128 bits', () => {
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'password12345678' })).toThrow(
      /ADMIN_API_KEY must be at least 32 characters/,
    );
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: ' '.repeat(40) })).toThrow(
      'invalid environment: ADMIN_API_KEY must not contain whitespace',
    );
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'a-long-enough-admin-key 0123456789' })).toThrow(
      'ADMIN_API_KEY must not contain whitespace',
    );
    // Long enough, but a guesser gets most characters for free: repeats, runs, one class.
    for (const guessable of [
      'x'.repeat(40),
      'ab'.repeat(16),
      'password'.repeat(4),
      '1234567890'.repeat(3) + '12',
      'a'.repeat(31) + 'b',
      '0123456789abcdef'.repeat(2),
      'abcdefghijklmnopqrstuvwxyz012345',
      '31415926535897932384626433832795', // 32 digits: about 106 bits even if random
    ]) {
      expect(() => parseEnv({ ...base, ADMIN_API_KEY: guessable }), guessable).toThrow(
        /^invalid environment: ADMIN_API_KEY is too easy to guess \(about \d+ bits .*at least 128 needed; generate one: openssl rand -hex 32\)$/,
      );
    }
    // What the generators give: hex of 16 and 32 bytes, base64url of 24 bytes.
    for (const random of [
      'd68c918dce3233d77d17f5c6f25cb2a5',
      '75149cce1c418d95cce32f227c4e3840ea2b98c7604a05d4e83a0e30ae4ab4c9',
      'yyuHCbA4uCZavBVKZjTwDSJ6OfXWqKSJ',
    ]) {
      expect(parseEnv({ ...base, ADMIN_API_KEY: random }).ADMIN_API_KEY).toBe(random);
    }
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

  it('reads the player token settings: no secret by default, one hard to guess', () => {
    expect(parseEnv(base)).toMatchObject({ RATE_LIMIT_PER_PLAYER: 120, STREAMS_PER_PLAYER: 4 });
    expect(parseEnv(base).PLAYER_TOKEN_SECRET).toBeUndefined();
    const secret = '5c0e9a7f31b24d68e0a1f9c3b7d52e84';
    expect(parseEnv({ ...base, PLAYER_TOKEN_SECRET: secret }).PLAYER_TOKEN_SECRET).toBe(secret);
    expect(() => parseEnv({ ...base, PLAYER_TOKEN_SECRET: secret.slice(1) })).toThrow(
      /^invalid environment: PLAYER_TOKEN_SECRET must be at least 32 characters/,
    );
    // Anyone who guesses it mints tokens: a repeated character is refused, and so is the
    // deploy/ placeholder, which has spaces.
    expect(() => parseEnv({ ...base, PLAYER_TOKEN_SECRET: 'x'.repeat(40) })).toThrow(
      /PLAYER_TOKEN_SECRET is too easy to guess/,
    );
    expect(() =>
      parseEnv({ ...base, ERASURE_HASH_SECRET: 'replace me with the output of openssl rand -hex 32' }),
    ).toThrow(/ERASURE_HASH_SECRET must not contain whitespace/);
    // Admission tells tokens from keys by shape: an admin key of a token's shape would never work.
    expect(() => parseEnv({ ...base, ADMIN_API_KEY: 'eyJhbGciOi.a-long-enough-admin-key.0123456789abcdef' })).toThrow(
      /^invalid environment: ADMIN_API_KEY must not look like a player token/,
    );
  });

  it('caps event streams below the connection limit, per key and per address', () => {
    const env = parseEnv(base);
    expect(env).toMatchObject({ STREAMS_PER_KEY: 100, STREAMS_PER_IP: 100, HTTP_PENDING_CONNECTIONS_PER_IP: 64 });
    // Unset: three quarters of the connection limit, at most 10,000.
    expect(streamsMax(env)).toBe(10_000);
    expect(streamsMax(parseEnv({ ...base, HTTP_MAX_CONNECTIONS: '400' }))).toBe(300);
    expect(streamsMax(parseEnv({ ...base, HTTP_MAX_CONNECTIONS: '400', STREAMS_MAX: '399' }))).toBe(399);
    expect(() => parseEnv({ ...base, HTTP_MAX_CONNECTIONS: '400', STREAMS_MAX: '400' })).toThrow(
      /^invalid environment: STREAMS_MAX must be below HTTP_MAX_CONNECTIONS/,
    );
    expect(() => parseEnv({ ...base, STREAMS_PER_KEY: '-1' })).toThrow(/^invalid environment: STREAMS_PER_KEY /);
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
