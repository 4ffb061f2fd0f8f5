import { connect } from 'node:net';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, type ApiResponse, type Harness } from '../support/harness.js';
import { TEST_REDIS_URL } from '../support/databases.js';
import { keysOfPrefix, scanMatching } from '../../src/storage/redis/maintenance.js';

/**
 * Hostile and malformed intake: every bad request is a 4xx in the API's error
 * shape naming the problem, never a 500, and leaves no trace: no job, no row, no Redis key.
 * The valid edges right next to each limit are accepted, applied and read back.
 */

const TWO_40 = 2 ** 40;
let h: Harness;
let redis: Redis;

beforeAll(async () => {
  // No workers: whatever intake enqueued would stay visible in the queue.
  h = await createHarness({ workers: false });
  redis = new Redis(TEST_REDIS_URL);
  await h.api('PUT', '/v1/boards/game', {
    aggregation: 'best',
    categories: ['kills'],
    minValue: -TWO_40,
    maxValue: TWO_40,
  });
  await h.api('PUT', '/v1/boards/cents', { aggregation: 'sum', decimals: 2 });
  await h.api('PUT', '/v1/boards/micro', { aggregation: 'last', decimals: 6 });
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
});

interface Trace {
  jobs: number;
  rows: Record<string, number>;
  keys: string[];
}

/** Everything intake could leave behind: queue jobs, ledger rows, keys under the prefix. */
async function trace(): Promise<Trace> {
  const counts = await h.ctx.scoreQueue.getJobCounts(
    'waiting',
    'active',
    'delayed',
    'prioritized',
    'completed',
    'failed',
  );
  const rows: Record<string, number> = {};
  for (const table of ['score_events', 'rejections', 'periods', 'members', 'member_aggregates'] as const) {
    const row = await h.ctx.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    rows[table] = Number(row.n);
  }
  // Rate-limit counters count requests, valid or not; they are not data.
  const keys = (await scanMatching(redis, keysOfPrefix(h.env.REDIS_PREFIX))).filter(
    (k) => !k.startsWith(`${h.env.REDIS_PREFIX}:rl:`),
  );
  return { jobs: Object.values(counts).reduce((a, b) => a + b, 0), rows, keys: keys.sort() };
}

/** Posts a body exactly as given (a string is sent as is), with the admin key. */
async function post(
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  query = '',
): Promise<ApiResponse> {
  const res = await fetch(`${h.baseUrl}/v1/events${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text: the assertion below reports it
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The API's error shape, with the named field among the details when one is expected. */
function expectRefused(res: ApiResponse, status: number, path?: string | RegExp, index?: number): void {
  const label = JSON.stringify(res.body).slice(0, 300);
  expect(res.status, label).toBe(status);
  expect(typeof res.body?.error, label).toBe('string');
  expect(typeof res.body?.message, label).toBe('string');
  expect(res.body.message.length, label).toBeGreaterThan(0);
  if (path === undefined) return;
  const details: Array<{ index?: number; path: string; message: string }> = res.body.details ?? [];
  const hit = details.find(
    (d) => (typeof path === 'string' ? d.path === path : path.test(d.path)) && d.index === index,
  );
  expect(hit, `${String(path)}${index === undefined ? '' : ` at ${index}`} in ${label}`).toBeDefined();
  expect(hit!.message.length).toBeGreaterThan(0);
}

let serial = 0;
const event = (over: Record<string, unknown> = {}) => ({
  board: 'game',
  member: 'p1',
  value: 10,
  idempotencyKey: `fz-${++serial}`,
  ...over,
});

/** Runs requests that must all be refused and checks none of them left a trace. */
async function withoutTrace(run: () => Promise<void>): Promise<void> {
  const before = await trace();
  await run();
  expect(await trace()).toEqual(before);
}

describe('malformed bodies', () => {
  it('answers 400 invalid_json for text that is not JSON, NaN and Infinity included', async () => {
    await withoutTrace(async () => {
      const valid = JSON.stringify(event());
      for (const text of [
        '{',
        '{"board": "game", ',
        "{'board': 'game'}",
        '{"board":"game",}',
        valid.replace('"value":10', '"value":NaN'),
        valid.replace('"value":10', '"value":Infinity'),
        valid.replace('"value":10', '"value":-Infinity'),
        valid.replace('"value":10', '"value":0x10'),
        valid.replace('"value":10', '"value":+10'),
        valid.replace('"value":10', '"value":.5'),
        valid + 'x',
        '\u0000',
        '{"events": [' + valid,
      ]) {
        const res = await post(text);
        expectRefused(res, 400);
        expect(res.body.error, text).toBe('invalid_json');
      }
    });
  });

  it('answers 400 naming the root for bodies that are not an event or a batch', async () => {
    await withoutTrace(async () => {
      for (const text of ['null', 'true', '42', '"event"', '[]', JSON.stringify([event()])]) {
        expectRefused(await post(text), 400, '(root)');
      }
      // An empty JSON body is an event with every required field missing.
      const empty = await post('');
      for (const field of ['board', 'member', 'value', 'idempotencyKey']) expectRefused(empty, 400, field);
    });
  });

  it('answers 415 for a body that is not JSON, before reading it', async () => {
    await withoutTrace(async () => {
      const body = JSON.stringify(event());
      const contentTypes: Array<Record<string, string>> = [
        { 'content-type': 'text/plain' },
        { 'content-type': 'application/x-www-form-urlencoded' },
        { 'content-type': 'multipart/form-data; boundary=x' },
        { 'content-type': 'application/json; charset=latin1' },
        {},
      ];
      for (const headers of contentTypes) {
        const res = await fetch(`${h.baseUrl}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, ...headers },
          body: new TextEncoder().encode(body),
        });
        const answer: ApiResponse = { status: res.status, body: await res.json(), headers: res.headers };
        expectRefused(answer, 415);
        expect(answer.body.error).toBe('unsupported_media_type');
      }
    });
  });
});

describe('body size', () => {
  const tenMb = () => JSON.stringify({ ...event(), metadata: { blob: 'x'.repeat(10 * 1024 * 1024) } });

  it('answers 413 for a 10 MB body, with a length or chunked', async () => {
    await withoutTrace(async () => {
      const sized = await post(tenMb());
      expectRefused(sized, 413);
      expect(sized.body.error).toBe('payload_too_large');
      expect(sized.body.message).toContain('1 MB');

      const text = new TextEncoder().encode(tenMb());
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < text.length; at += 256 * 1024) controller.enqueue(text.subarray(at, at + 256 * 1024));
          controller.close();
        },
      });
      const res = await fetch(`${h.baseUrl}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: chunks,
        duplex: 'half',
      });
      expectRefused({ status: res.status, body: await res.json(), headers: res.headers }, 413);
    });
  });

  it('answers 413 from the declared length alone, without waiting for the body', async () => {
    // Only the head of the body is ever sent: a server that read on would never answer.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(h.baseUrl).port), '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        if (received.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on('error', reject);
      socket.write(
        'POST /v1/events HTTP/1.1\r\nHost: laurel\r\n' +
          `Authorization: Bearer ${ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n{"board":"game",`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('answers 413 just above 1 MB and accepts a body just below it', async () => {
    const limit = 1024 * 1024;
    const padded = (size: number) => {
      const text = JSON.stringify({ events: [event()] });
      return text.slice(0, -1) + ' '.repeat(size - text.length) + '}';
    };
    await withoutTrace(async () => expectRefused(await post(padded(limit + 1)), 413));
    expect((await post(padded(limit))).status).toBe(202);
  });
});

describe('fields of one event', () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    // wrong types
    ['value as a string', { value: '10' }, 'value'],
    ['value true', { value: true }, 'value'],
    ['value null', { value: null }, 'value'],
    ['value array', { value: [1] }, 'value'],
    ['value object', { value: { n: 1 } }, 'value'],
    ['value "NaN"', { value: 'NaN' }, 'value'],
    ['member number', { member: 123 }, 'member'],
    ['member null', { member: null }, 'member'],
    ['board number', { board: 1 }, 'board'],
    ['key number', { idempotencyKey: 5 }, 'idempotencyKey'],
    ['occurredAt epoch number', { occurredAt: 1_700_000_000 }, 'occurredAt'],
    ['occurredAt prose', { occurredAt: 'yesterday' }, 'occurredAt'],
    ['occurredAt without zone', { occurredAt: '2026-01-01T00:00:00' }, 'occurredAt'],
    ['occurredAt 30 February', { occurredAt: '2026-02-30T00:00:00Z' }, 'occurredAt'],
    ['occurredAt hour 24', { occurredAt: '2026-01-01T24:00:00Z' }, 'occurredAt'],
    ['occurredAt offset out of range', { occurredAt: '2026-01-01T00:00:00+99:00' }, 'occurredAt'],
    ['category number', { category: 5 }, 'category'],
    ['metadata string', { metadata: 'x' }, 'metadata'],
    ['metadata array', { metadata: [1] }, 'metadata'],
    ['metadata null', { metadata: null }, 'metadata'],
    ['source number', { source: 7 }, 'source'],
    // unicode and control characters in ids
    ['member with é', { member: 'joué' }, 'member'],
    ['member emoji', { member: 'p🏆' }, 'member'],
    ['member zero-width space', { member: 'p\u200b1' }, 'member'],
    ['member right-to-left override', { member: '\u202ep1' }, 'member'],
    ['member NUL', { member: 'p\u00001' }, 'member'],
    ['member newline', { member: 'p\n1' }, 'member'],
    ['member space', { member: 'p 1' }, 'member'],
    ['member empty', { member: '' }, 'member'],
    ['member 129 chars', { member: 'm'.repeat(129) }, 'member'],
    ['key NUL', { idempotencyKey: 'k\u0000' }, 'idempotencyKey'],
    ['key tab', { idempotencyKey: 'k\t1' }, 'idempotencyKey'],
    ['key space', { idempotencyKey: 'k 1' }, 'idempotencyKey'],
    ['key DEL', { idempotencyKey: 'k\u007f' }, 'idempotencyKey'],
    ['key é', { idempotencyKey: 'clé' }, 'idempotencyKey'],
    ['key empty', { idempotencyKey: '' }, 'idempotencyKey'],
    ['key 129 chars', { idempotencyKey: 'k'.repeat(129) }, 'idempotencyKey'],
    ['board uppercase', { board: 'Game' }, 'board'],
    ['board umlaut', { board: 'gäme' }, 'board'],
    ['board 65 chars', { board: 'g'.repeat(65) }, 'board'],
    ['category NUL', { category: 'kills\u0000' }, 'category'],
    ['source newline', { source: 'server\n1' }, 'source'],
    // quote and Lua meta-characters where ids do not allow them
    ['member double quote', { member: 'p"1' }, 'member'],
    ['member single quote', { member: "p'1" }, 'member'],
    ['member backslash', { member: 'p\\1' }, 'member'],
    ['member percent', { member: 'p%s' }, 'member'],
    ['member Lua long bracket', { member: 'p[[1]]' }, 'member'],
    ['member braces', { member: '{p}' }, 'member'],
    ['member star', { member: 'p*' }, 'member'],
    ['board quote', { board: 'ga"me' }, 'board'],
    ['board percent', { board: 'g%me' }, 'board'],
    ['category quote', { category: 'kills"' }, 'category'],
    ['category single quote', { category: "kills'--" }, 'category'],
    ['category percent', { category: 'k%d' }, 'category'],
    ['category bracket', { category: 'kills[1]' }, 'category'],
    ['category backslash', { category: 'kills\\' }, 'category'],
    ['category colon', { category: 'a:b' }, 'category'],
    // checks against the board
    ['unknown board', { board: 'nope' }, 'board'],
    ['unknown category', { category: 'deaths' }, 'category'],
    ['value above maxValue', { value: TWO_40 + 1 }, 'value'],
    ['value below minValue', { value: -TWO_40 - 1 }, 'value'],
    ['decimals on a 0-decimal board', { value: 1.5 }, 'value'],
    ['tiny fraction', { value: 1e-7 }, 'value'],
    ['occurredAt far future', { occurredAt: '2999-01-01T00:00:00Z' }, 'occurredAt'],
    ['occurredAt before 2000', { occurredAt: '1999-12-31T23:59:59Z' }, 'occurredAt'],
    // sizes
    ['metadata over 2 KB', { metadata: { blob: 'x'.repeat(2048) } }, 'metadata'],
    ['metadata nested 17 deep', { metadata: JSON.parse('{"a":'.repeat(17) + '1' + '}'.repeat(17)) }, 'metadata'],
    ['metadata with NUL', { metadata: { note: 'a\u0000b' } }, 'metadata'],
  ];

  it.each(bad)('refuses %s with a 400 naming the field', async (_name, over, path) => {
    await withoutTrace(async () => {
      expectRefused(await post(event(over)), 400, path);
      expectRefused(await post({ events: [event(), event(over)] }), 400, path, 1);
    });
  });

  it('refuses numbers beyond ±2^40 after scaling, and huge or non-finite ones', async () => {
    await withoutTrace(async () => {
      for (const [board, text] of [
        ['game', '1099511627777'],
        ['game', '-1099511627777'],
        ['game', '9007199254740993'],
        ['game', '1e308'],
        ['game', '1e400'],
        ['game', '-1e400'],
        ['game', '123456789012345678901234567890'],
        ['cents', '10995116277.77'],
        ['cents', '-10995116277.77'],
        ['cents', '0.30000000000000004'],
        ['cents', '0.001'],
        ['micro', '1099511.627777'],
        ['micro', '0.0000001'],
        ['micro', '1e-300'],
      ] as const) {
        const body = JSON.stringify(event({ board, value: 0 })).replace('"value":0', `"value":${text}`);
        expectRefused(await post(body), 400, 'value');
      }
    });
  });

  it('names missing fields, unknown fields and prototype-looking keys', async () => {
    await withoutTrace(async () => {
      for (const field of ['board', 'member', 'value', 'idempotencyKey']) {
        const { [field]: _dropped, ...rest } = event() as Record<string, unknown>;
        expectRefused(await post(rest), 400, field);
      }
      expectRefused(await post(event({ extra: true })), 400, 'extra');
      expectRefused(await post(event({ Value: 1 })), 400, 'Value');
      const valid = JSON.stringify(event());
      for (const key of ['__proto__', 'constructor', 'prototype', 'toString']) {
        expectRefused(await post(`${valid.slice(0, -1)},"${key}":{"value":1}}`), 400, key);
      }
      // A repeated key: JSON keeps the last one, which is the wrong type here.
      expectRefused(await post(`${valid.slice(0, -1)},"value":"ten"}`), 400, 'value');
    });
  });

  it('refuses a bad wait flag', async () => {
    await withoutTrace(async () => {
      for (const query of ['?wait=yes', '?wait=', '?wait=true&wait=false', '?wait=1'])
        expectRefused(await post(event(), undefined, query), 400, 'wait');
    });
  });

  it('refuses metadata nested far deeper than a stack would allow, with a 400', async () => {
    await withoutTrace(async () => {
      const depth = 300_000;
      const body = JSON.stringify(event({ metadata: {} })).replace(
        '"metadata":{}',
        `"metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      );
      expectRefused(await post(body), 400, 'metadata');
    });
  });

  it('refuses metadata holding an array wider than a spread would allow, with a 400', async () => {
    await withoutTrace(async () => {
      const body = JSON.stringify(event({ metadata: { a: new Array(300_000).fill(0) } }));
      expectRefused(await post(body), 400, 'metadata');
    });
  });
});

describe('batches', () => {
  it('refuses malformed batches, naming the field', async () => {
    await withoutTrace(async () => {
      expectRefused(await post({ events: [] }), 400, 'events');
      expectRefused(await post({ events: Array.from({ length: 1001 }, () => event()) }), 400, 'events');
      expectRefused(await post({ events: 'x' }), 400, 'events');
      expectRefused(await post({ events: null }), 400, 'events');
      expectRefused(await post({ events: { 0: event() } }), 400, 'events');
      expectRefused(await post({ events: [event()], extra: 1 }), 400, 'extra');
      expectRefused(await post({ events: [event(), null] }), 400, '(root)', 1);
      expectRefused(await post({ events: [event(), 'event'] }), 400, '(root)', 1);
      expectRefused(await post({ events: [event(), [event()]] }), 400, '(root)', 1);
    });
  });

  it('refuses a batch of 1000 whose last event is bad, naming its index', async () => {
    await withoutTrace(async () => {
      const events = Array.from({ length: 1000 }, () => event());
      events[999] = event({ member: 'bad member' });
      expectRefused(await post({ events }), 400, 'member', 999);
    });
  });
});

describe('generated hostile input', () => {
  // Characters each field refuses, quotes and Lua meta-characters among them.
  const forbidden = fc.constantFrom(
    '"',
    "'",
    '\\',
    '%',
    '[',
    ']',
    ' ',
    '\n',
    '\t',
    '\u0000',
    '\u007f',
    'é',
    '🏆',
    '\u200b',
    '*',
    '#',
    '/',
    '?',
  );
  const notAString = fc.oneof(
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
  );
  const notANumber = fc.oneof(
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.double(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
  );
  // Keys and sources are printable ASCII (sources may hold spaces): only these break them.
  const idForbidden = (field: string) =>
    field === 'idempotencyKey'
      ? fc.constantFrom(' ', '\n', '\t', '\u0000', 'é', '🏆', '\u007f')
      : field === 'source'
        ? fc.constantFrom('\n', '\t', '\u0000', 'é', '🏆', '\u007f')
        : forbidden;
  const badField = fc.oneof(
    fc.record({ field: fc.constantFrom('board', 'member', 'idempotencyKey', 'category', 'source'), value: notAString }),
    fc.record({ field: fc.constant('value'), value: notANumber }),
    fc
      .constantFrom('board', 'member', 'idempotencyKey', 'category', 'source')
      .chain((field) =>
        fc
          .tuple(fc.string({ maxLength: 20 }), idForbidden(field), fc.string({ maxLength: 20 }))
          .map(([a, bad, b]) => ({ field, value: `${a}${bad}${b}` })),
      ),
    fc.record({
      field: fc.constant('value'),
      value: fc.oneof(fc.double({ min: TWO_40 + 1, noNaN: true }), fc.double({ max: -TWO_40 - 1, noNaN: true })),
    }),
  );

  it('refuses an event with one field made invalid by construction, naming that field', async () => {
    const before = await trace();
    await fc.assert(
      fc.asyncProperty(badField, fc.nat({ max: 3 }), async ({ field, value }, position) => {
        const events = Array.from({ length: 4 }, () => event());
        events[position] = event({ [field]: value });
        const res = await post({ events });
        expectRefused(res, 400, field, position);
      }),
      { numRuns: 150 },
    );
    expect(await trace()).toEqual(before);
  });

  it('never answers 5xx to arbitrary JSON, and enqueues exactly the batches it accepted', async () => {
    const before = await trace();
    let accepted = 0;
    const arbitraryEvent = fc.record(
      {
        board: fc.oneof(fc.constantFrom('game', 'cents', 'micro'), fc.string({ maxLength: 10 })),
        member: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue()),
        value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.jsonValue()),
        idempotencyKey: fc.oneof(fc.string({ maxLength: 130 }), fc.jsonValue()),
        occurredAt: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        category: fc.oneof(fc.constant('kills'), fc.string()),
        metadata: fc.jsonValue({ maxDepth: 4 }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          arbitraryEvent,
          fc.array(arbitraryEvent, { maxLength: 5 }).map((events) => ({ events })),
        ),
        async (body) => {
          const res = await post(body);
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
          if (res.status === 202) accepted += 1;
          else expectRefused(res, 400);
        },
      ),
      { numRuns: 200 },
    );
    const after = await trace();
    expect(after.jobs - before.jobs).toBe(accepted);
    expect(after.rows).toEqual(before.rows);
  });
});

describe('valid edges', () => {
  let w: Harness;
  beforeAll(async () => {
    w = await createHarness();
    await w.api('PUT', '/v1/boards/edge', { aggregation: 'best' });
    await w.api('PUT', '/v1/boards/lua', { aggregation: 'best', categories: ['kills'] });
    await w.api('PUT', '/v1/boards/cents', { aggregation: 'best', decimals: 2 });
    await w.api('PUT', '/v1/boards/micro', { aggregation: 'best', decimals: 6 });
  });
  afterAll(() => w.close());

  it('accepts and applies the values at exactly ±2^40 after scaling, and -0 as 0', async () => {
    const cases: Array<[string, string, string, number]> = [
      ['edge', 'top', '1099511627776', TWO_40],
      ['edge', 'bottom', '-1099511627776', -TWO_40],
      ['edge', 'zero', '-0', 0],
      ['cents', 'top', '10995116277.76', 10995116277.76],
      ['cents', 'bottom', '-10995116277.76', -10995116277.76],
      ['micro', 'top', '1099511.627776', 1099511.627776],
      ['micro', 'small', '0.000001', 0.000001],
    ];
    for (const [board, member, text, expected] of cases) {
      const body = JSON.stringify({ board, member, value: 0, idempotencyKey: `edge-${board}-${member}` }).replace(
        '"value":0',
        `"value":${text}`,
      );
      const res = await fetch(`${w.baseUrl}/v1/events?wait=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body,
      });
      const answer = (await res.json()) as any;
      expect(res.status, JSON.stringify(answer)).toBe(200);
      expect(answer.results[0].status).toBe('applied');
      const standing = await w.api('GET', `/v1/boards/${board}/standings/${member}`);
      expect(standing.body.score).toBe(expected);
      expect(Object.is(standing.body.score, -0)).toBe(false);
    }
  });

  it('accepts ids at their longest and keys full of quotes and Lua meta-characters, and finds them again', async () => {
    const members = ['m'.repeat(128), 'p:1@eu.zone_a-b', '.-_:@'];
    const keys = [
      '"\'\\%[]{}()^$*+?.-:#!~`<>|&;=,/',
      'k'.repeat(128),
      ']]--[[',
      '%s%d%%',
      '{edge|all}',
      'KEYS[1]',
      'return\\"x\\"',
    ];
    const events = members.flatMap((member, m) =>
      keys.map((idempotencyKey, k) => ({
        board: 'lua',
        member,
        value: m * 10 + k,
        idempotencyKey: `${idempotencyKey}${m}`.slice(-128),
        category: 'kills',
      })),
    );
    const res = await w.api('POST', '/v1/events?wait=true', { events });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.map((r: any) => r.status)).toEqual(events.map(() => 'applied'));
    for (const e of events) {
      const status = await w.api('GET', `/v1/events/${encodeURIComponent(e.idempotencyKey)}`);
      expect(status.body).toMatchObject({ idempotencyKey: e.idempotencyKey, status: 'applied', member: e.member });
    }
    // Each member's best is its last key's value; reference ranks computed here.
    const best = members
      .map((member, m) => ({ member, score: m * 10 + keys.length - 1 }))
      .sort((a, b) => b.score - a.score);
    for (const category of ['all', 'kills']) {
      const page = await w.api('GET', `/v1/boards/lua/standings?category=${category}`);
      expect(page.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
        best.map((b, i) => [i + 1, b.member, b.score]),
      );
    }
    for (const member of members) {
      const one = await w.api('GET', `/v1/boards/lua/standings/${encodeURIComponent(member)}`);
      expect(one.body.member).toBe(member);
      expect(one.body.rank).toBe(best.findIndex((b) => b.member === member) + 1);
    }
  });

  it('accepts a batch of exactly 1000, metadata of exactly 2 KB and 16 levels, and occurredAt 5 minutes ahead', async () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      board: 'edge',
      member: `b${i % 100}`,
      value: i,
      idempotencyKey: `batch-${i}`,
    }));
    expect((await w.api('POST', '/v1/events', { events })).body).toEqual({ accepted: 1000 });
    const shell = JSON.stringify({ blob: '' });
    const metadata = { blob: 'x'.repeat(2048 - shell.length) };
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(2048);
    const nested = JSON.parse('{"a":'.repeat(16) + '1' + '}'.repeat(16));
    const ahead = new Date(w.clock.now().getTime() + 5 * 60 * 1000).toISOString();
    const res = await w.api('POST', '/v1/events', {
      events: [
        { board: 'edge', member: 'meta', value: 1, idempotencyKey: 'meta-2kb', metadata },
        { board: 'edge', member: 'meta', value: 2, idempotencyKey: 'meta-deep', metadata: nested },
        { board: 'edge', member: 'meta', value: 3, idempotencyKey: 'ahead', occurredAt: ahead },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await w.drain();
    const count = await w.ctx.db
      .selectFrom('score_events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('board_id', '=', 'edge')
      .where('member_id', 'in', ['meta', ...Array.from({ length: 100 }, (_, i) => `b${i}`)])
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1003);
  });
});
