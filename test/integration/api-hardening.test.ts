import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/services/api-keys.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';

/** What the API shows and spends for hostile or merely unprivileged callers (red-team findings), one describe each. */

describe('unknown keys', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      workers: false,
      env: { RATE_LIMIT_KEY_LOOKUPS_PER_IP: '5', RATE_LIMIT_PER_IP: '1000', RATE_LIMIT_WINDOW_SECONDS: '60' },
    });
  });
  afterAll(() => h.close());

  /** Queries that reached Postgres and read api_keys, counted on the real client. */
  async function keyQueriesDuring(work: () => Promise<void>): Promise<number> {
    const texts: string[] = [];
    const original = pg.Client.prototype.query;
    const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: any[]) {
      const config = args[0] as string | { text?: string };
      texts.push(typeof config === 'string' ? config : (config?.text ?? ''));
      return (original as (...a: any[]) => any).apply(this, args);
    });
    try {
      await work();
    } finally {
      spy.mockRestore();
    }
    return texts.filter((text) => /\bapi_keys\b/.test(text)).length;
  }

  it('spends a per-IP lookup budget before asking Postgres, and remembers a refused key', async () => {
    const guessed = Array.from({ length: 30 }, () => `lrl_${randomBytes(32).toString('base64url')}`);
    const statuses: number[] = [];
    const queries = await keyQueriesDuring(async () => {
      for (const key of guessed) statuses.push((await h.api('GET', '/v1/boards', undefined, key)).status);
    });
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(25).fill(429)]);
    expect(queries).toBe(5);
    // A key just found unknown is refused from memory, not looked up again.
    const again = await keyQueriesDuring(async () => {
      for (let i = 0; i < 10; i += 1)
        expect((await h.api('GET', '/v1/boards', undefined, guessed[0])).status).toBe(401);
    });
    expect(again).toBe(0);
  });
});

describe('validation details', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
    await h.api('PUT', '/v1/boards/cap', { aggregation: 'sum', period: 'all' });
  });
  afterAll(() => h.close());

  it('lists at most 100 problems and counts the rest in the message, in the API error shape', async () => {
    const events = Array.from({ length: 300 }, (_, i) => ({
      board: 'cap',
      member: `m${i}`,
      value: 1,
      idempotencyKey: `cap-${i}`,
      junk1: 1,
      junk2: 2,
    }));
    const res = await h.api('POST', '/v1/events', { events });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['details', 'error', 'message']);
    expect(res.body.error).toBe('validation_failed');
    expect(res.body.details).toHaveLength(100);
    expect(res.body.details[0]).toEqual({ index: 0, path: 'junk1', message: 'unknown field' });
    for (const detail of res.body.details) expect(Object.keys(detail).sort()).toEqual(['index', 'message', 'path']);
    expect(res.body.message).toContain('500 more');
  });
  it('echoes unknown field names cut short, however long the client made them', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `${i}${'n'.repeat(90_000)}`);
    const event = { board: 'cap', member: 'long', value: 1, idempotencyKey: 'cap-long' };
    const single = await h.api('POST', '/v1/events', { ...event, ...Object.fromEntries(names.map((n) => [n, 1])) });
    const batch = await h.api('POST', '/v1/events', {
      events: [event],
      ...Object.fromEntries(names.map((n) => [n, 1])),
    });
    for (const res of [single, batch]) {
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body).length).toBeLessThan(4_000);
      const paths = (res.body.details as { path: string }[]).map((d) => d.path).sort();
      expect(paths).toEqual(names.map((n) => `${n.slice(0, 64)}…`).sort());
    }
    expect(batch.body.details[0].message).toBe('unknown field');
  });

  it('answers a body that is not gzip although it says so in plain words', async () => {
    const res = await fetch(`${h.baseUrl}/v1/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN_KEY}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: JSON.stringify({ board: 'cap', member: 'gz', value: 1, idempotencyKey: 'cap-gz' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; message: string };
    expect(body).toEqual({
      error: 'bad_request',
      message: 'request body could not be decompressed: send valid gzip or deflate data, or no Content-Encoding',
    });
  });
});

describe('metadata keys that name the prototype', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
    await h.api('PUT', '/v1/boards/meta', { aggregation: 'sum', period: 'all' });
  });
  afterAll(() => h.close());

  it('refuses __proto__, constructor and prototype anywhere in metadata with a 400 naming the field', async () => {
    const before = await h.ctx.scoreQueue.count();
    for (const [i, raw] of [
      '{"__proto__":{"x":1}}',
      '{"a":{"constructor":1}}',
      '{"list":[{"prototype":true}]}',
    ].entries()) {
      const body = `{"board":"meta","member":"m","value":1,"idempotencyKey":"meta-${i}","metadata":${raw}}`;
      const res = await h.api('POST', '/v1/events', body);
      expect(res.status, raw).toBe(400);
      expect(res.body.details, raw).toEqual([
        { path: 'metadata', message: expect.stringMatching(/__proto__|constructor|prototype/) },
      ]);
    }
    expect(await h.ctx.scoreQueue.count()).toBe(before);
  });
});

describe('IPv6 budgets', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      workers: false,
      env: { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW_SECONDS: '60' },
    });
  });
  afterAll(() => h.close());

  const from = (ip: string) =>
    fetch(`${h.baseUrl}/openapi.json`, { headers: { 'x-forwarded-for': ip } }).then((r) => r.status);

  it('gives one budget to a whole /64, and its own to the next /64', async () => {
    const statuses = [];
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:fffe', '2001:db8:1:2::abcd'])
      statuses.push(await from(ip));
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await from('2001:db8:1:3::1')).toBe(200);
    // IPv4 (and IPv4-mapped IPv6) addresses keep a budget each.
    expect(await from('192.0.2.1')).toBe(200);
    expect(await from('192.0.2.2')).toBe(200);
  });
});

describe('who sees what of events and members', () => {
  let h: Harness;
  let ingestKey: string;
  let readKey: string;
  beforeAll(async () => {
    h = await createHarness({ env: { PUBLIC_READS: 'true' } });
    ingestKey = (await createApiKey(h.ctx.db, 'views-ingest', 'ingest')).key;
    readKey = (await createApiKey(h.ctx.db, 'views-read', 'read')).key;
    await h.api('PUT', '/v1/boards/views', { aggregation: 'sum', period: 'all' });
    await h.api('POST', '/v1/events', {
      board: 'views',
      member: 'p1',
      value: 5,
      idempotencyKey: 'v-applied',
      metadata: { secret: 'kept' },
    });
    await h.api('POST', '/v1/events', { board: 'views', member: 'p1', value: 7, idempotencyKey: 'v-voided' });
    await h.drain();
    // As a worker records an event it refuses (here: one outside the board's range).
    await h.ctx.db
      .insertInto('rejections')
      .values({
        idempotency_key: 'v-rejected',
        reason: 'out_of_range',
        board_id: 'views',
        period_key: 'all',
        member_id: 'p1',
        payload: JSON.stringify({
          board: 'views',
          member: 'p1',
          value: 1e9,
          idempotencyKey: 'v-rejected',
          metadata: { secret: 'rejected' },
        }),
        payload_hash: 'h',
        received_at: new Date(),
      } as any)
      .execute();
    expect((await h.api('POST', '/v1/events/v-voided/void', { reason: 'chargeback of player p1' })).status).toBe(200);
    await h.drain();
    await h.api('PUT', '/v1/members/p2', { displayName: 'P2' });
    expect((await h.api('POST', '/v1/members/p2/exclusion', { reason: 'cheating' })).status).toBe(200);
  });
  afterAll(() => h.close());

  it('shows an ingest key status and reason only, and an admin payloads and void reasons', async () => {
    const asIngest = (key: string) => h.api('GET', `/v1/events/${key}`, undefined, ingestKey);
    const voided = await asIngest('v-voided');
    expect(voided.body.status).toBe('voided');
    expect(voided.body).not.toHaveProperty('voidReason');
    const rejected = await asIngest('v-rejected');
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'out_of_range' });
    expect(rejected.body).not.toHaveProperty('payload');
    expect(JSON.stringify(rejected.body)).not.toContain('secret');
    expect((await asIngest('v-applied')).body.status).toBe('applied');

    expect((await h.api('GET', '/v1/events/v-voided')).body).toMatchObject({
      status: 'voided',
      voidReason: 'chargeback of player p1',
    });
    expect((await h.api('GET', '/v1/events/v-rejected')).body).toMatchObject({
      status: 'rejected',
      reason: 'out_of_range',
      payload: { value: 1e9, metadata: { secret: 'rejected' } },
    });
  });

  it('hides exclusion state from anonymous callers under PUBLIC_READS, not from keys', async () => {
    const anonymous = await h.api('GET', '/v1/members/p2', undefined, null);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).not.toHaveProperty('excluded');
    expect(JSON.stringify(anonymous.body)).not.toContain('cheating');
    expect((await h.api('GET', '/v1/members/p2', undefined, readKey)).body.excluded).toBe(true);
    expect((await h.api('GET', '/v1/members/p2')).body.excluded).toBe(true);
  });
});
