import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebApp } from '../../src/http/app.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { runTick } from '../../src/services/period-tick.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { routesOf } from '../support/routes.js';
import { openSse } from '../support/sse-client.js';

const run = promisify(execFile);
const doc = openApiDocument() as any;

/** Routes the document does not describe: the document itself and the three HTML apps. */
const UNDOCUMENTED = new Set(['GET /openapi.json', 'USE /docs', 'USE /admin/queues', 'USE /console']);

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema(doc, 'doc');

const toPattern = (route: string) => route.replace(/:(\w+)/g, '{$1}');

describe('the OpenAPI document', () => {
  it('lints with redocly without errors', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'laurel-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(doc));
      const { stdout, stderr } = await run('npx', ['redocly', 'lint', file, '--format', 'json'], {
        cwd: process.cwd(),
      }).catch((err: { stdout: string; stderr: string }) => err);
      const report = JSON.parse(stdout) as {
        totals: { errors: number };
        problems: Array<{ ruleId: string; message: string; severity: string }>;
      };
      expect(
        report.problems.filter((p) => p.severity === 'error'),
        stderr,
      ).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("says 3.1, carries the package's version and license, servers, and an operationId and tag on every operation", async () => {
    const { version, license } = JSON.parse(await (await import('node:fs/promises')).readFile('package.json', 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(version);
    // The same SPDX identifier as package.json (and LICENSE), never a proprietary placeholder.
    expect(doc.info.license).toEqual({ name: license, identifier: license });
    expect(doc.servers.length).toBeGreaterThan(0);
    const ids: string[] = [];
    for (const [p, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        expect(op.operationId, `${method} ${p}`).toMatch(/^[a-z][A-Za-z]+$/);
        expect(op.tags, `${method} ${p}`).toHaveLength(1);
        ids.push(op.operationId);
        const probe = ['/healthz', '/readyz'].includes(p);
        expect(op.security, `${method} ${p}`).toEqual(probe ? [] : expect.arrayContaining([{ bearer: [] }]));
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('every route answers as the document says', () => {
  let h: Harness;
  const covered = new Map<string, Set<number>>();

  beforeAll(async () => {
    h = await createHarness({ env: { PLAYER_TOKEN_SECRET: 'contract-player-token-secret-0123456789abcdef' } });
  });
  afterAll(() => h.close());

  /** Calls a route and checks the status and body against the document's operation. */
  async function call(route: string, url: string, body?: unknown, key: string | null = ADMIN_KEY) {
    const [method, pattern] = route.split(' ') as [string, string];
    const op = doc.paths[toPattern(pattern)]?.[method.toLowerCase()];
    expect(op, `${route} is documented`).toBeDefined();
    const res = await h.api(method, url, body, key);
    const label = `${method} ${url} -> ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
    let answer = op.responses[String(res.status)];
    expect(answer, `${label}: status documented`).toBeDefined();
    if (answer.$ref) answer = doc.components.responses[answer.$ref.split('/').pop()];
    const json = answer.content?.['application/json'];
    if (json) {
      const validate = ajv.compile({ $ref: `doc#/components/schemas/${json.schema.$ref.split('/').pop()}` });
      expect(validate(res.body) ? [] : validate.errors, label).toEqual([]);
    } else if (answer.content?.['text/plain']) {
      expect(typeof res.body, label).toBe('string');
    } else {
      expect(res.body, `${label}: no body`).toBeNull();
    }
    for (const header of Object.keys(answer.headers ?? {}))
      expect(res.headers.get(header), `${label}: ${header}`).toBeTruthy();
    if (!covered.has(route)) covered.set(route, new Set());
    covered.get(route)!.add(res.status);
    return res;
  }

  const validatorOf = (schemaRef: string) =>
    ajv.compile({ $ref: `doc#/components/schemas/${schemaRef.split('/').pop()}` });

  /**
   * An event stream route: status and content type as documented; for a stream, its first
   * message (or, with `untilEnd`, every message up to the end the server makes) validated
   * against the schema the document gives for that event name; else the JSON error body.
   */
  async function callStream(route: string, url: string, { untilEnd = false, key = ADMIN_KEY } = {}) {
    const [method, pattern] = route.split(' ') as [string, string];
    const op = doc.paths[toPattern(pattern)]?.[method.toLowerCase()];
    expect(op, `${route} is documented`).toBeDefined();
    const stream = await openSse(h.baseUrl + url, key);
    try {
      const label = `${method} ${url} -> ${stream.status}`;
      let answer = op.responses[String(stream.status)];
      expect(answer, `${label}: status documented`).toBeDefined();
      if (answer.$ref) answer = doc.components.responses[answer.$ref.split('/').pop()];
      const events = answer.content?.['text/event-stream'];
      if (events) {
        expect(stream.contentType, label).toMatch(/^text\/event-stream/);
        if (untilEnd) {
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<never>(
            (_, reject) =>
              (timer = setTimeout(
                () => reject(new Error(`${label}: not ended within 15 s: ${JSON.stringify(stream.messages)}`)),
                15_000,
              )),
          );
          await Promise.race([stream.ended, late]).finally(() => clearTimeout(timer));
        } else {
          await stream.next();
        }
        expect(stream.messages.length, `${label}: a first message`).toBeGreaterThan(0);
        for (const message of stream.messages) {
          const schema = events['x-event-data'][message.event];
          expect(schema, `${label}: event ${message.event} documented`).toBeDefined();
          const validate = validatorOf(schema.$ref);
          expect(
            validate(message.data) ? [] : validate.errors,
            `${label}: ${message.event} ${JSON.stringify(message.data)}`,
          ).toEqual([]);
        }
      } else {
        expect(stream.contentType, label).toMatch(/^application\/json/);
        const validate = validatorOf(answer.content['application/json'].schema.$ref);
        expect(validate(stream.body) ? [] : validate.errors, `${label}: ${JSON.stringify(stream.body)}`).toEqual([]);
      }
      if (!covered.has(route)) covered.set(route, new Set());
      covered.get(route)!.add(stream.status);
      return stream;
    } finally {
      stream.close();
    }
  }

  it('for each route of the router, successes and errors, validated against the document', async () => {
    // The validator does refuse what does not fit: a board without its fields, an extra field.
    const board = ajv.compile({ $ref: 'doc#/components/schemas/Health' });
    expect([board({}), board({ status: 'ok', extra: 1 }), board({ status: 'ok' })]).toEqual([false, false, true]);
    h.clock.set('2026-11-15T12:00:00Z');
    await call('PUT /v1/boards/:boardId', '/v1/boards/arena', {
      aggregation: 'sum',
      graceSeconds: 0,
      categories: ['ranked'],
      regions: true,
    });
    await call('PUT /v1/boards/:boardId', '/v1/boards/arena', {
      aggregation: 'sum',
      graceSeconds: 0,
      categories: ['ranked'],
      regions: true,
    });
    await call('PUT /v1/boards/:boardId', '/v1/boards/arena', { aggregation: 'best' }).then((r) =>
      expect(r.status).toBe(200),
    );
    await call('PUT /v1/boards/:boardId', '/v1/boards/bad', { aggregation: 'nope' });
    await call('GET /v1/boards', '/v1/boards');
    await call('GET /v1/boards', '/v1/boards', undefined, null);
    await call('GET /v1/boards/:boardId', '/v1/boards/arena');
    await call('GET /v1/boards/:boardId', '/v1/boards/none');

    await call('PUT /v1/members/:memberId', '/v1/members/p1', { displayName: 'Player one', region: 'FR' });
    await call('PUT /v1/members/:memberId', '/v1/members/p2', { region: 'DE' });
    await call('PUT /v1/members/:memberId/following', '/v1/members/p1/following', { memberIds: ['p2', 'p3'] });
    await call('PUT /v1/members/:memberId/following', '/v1/members/p1/following', { memberIds: 'p2' });
    const batch = await call('PUT /v1/members', '/v1/members', {
      members: [
        { id: 'p4', displayName: 'Player four', region: 'FR', following: ['p1'] },
        { id: 'p5', following: [] },
      ],
    });
    expect(batch.body).toEqual({ updated: 2 });
    await call('PUT /v1/members', '/v1/members', { members: [{ id: 'p4' }, { id: 'bad id', region: 'world' }] });
    const found = await call('GET /v1/members', '/v1/members?q=player&limit=5');
    expect(found.body.members.map((m: { id: string }) => m.id)).toEqual(['p4', 'p1']);
    await call('GET /v1/members', '/v1/members?limit=5');
    const minted = await call('POST /v1/player-tokens', '/v1/player-tokens', { member: 'p1', ttlSeconds: 600 });
    expect(minted.status).toBe(201);
    await call('POST /v1/player-tokens', '/v1/player-tokens', { member: 'bad id' });
    await call('GET /v1/members/:memberId', '/v1/members/p1', undefined, minted.body.token);
    await call('GET /v1/members/:memberId', '/v1/members/p2', undefined, minted.body.token);
    const events = [1, 2, 3].map((i) => ({
      board: 'arena',
      member: `p${i}`,
      value: i * 10,
      idempotencyKey: `c-${i}`,
      category: 'ranked',
    }));
    await call('POST /v1/events', '/v1/events?wait=true', { events });
    await call('POST /v1/events', '/v1/events', { board: 'arena', member: 'p1', value: 5, idempotencyKey: 'c-single' });
    await call('POST /v1/events', '/v1/events', { board: 'arena', member: 'p1', value: 'x', idempotencyKey: 'c-bad' });
    await h.drain();
    await call('GET /v1/events/:idempotencyKey', '/v1/events/c-1');
    await call('GET /v1/events/:idempotencyKey', '/v1/events/unknown-key');
    await call('POST /v1/events/:idempotencyKey/void', '/v1/events/c-single/void', { reason: 'test' });
    await call('GET /v1/events/:idempotencyKey', '/v1/events/c-single');
    await call('POST /v1/events', '/v1/events?wait=true', {
      board: 'arena',
      member: 'p1',
      value: 99,
      idempotencyKey: 'c-1',
    });

    for (const query of [
      '',
      '?category=ranked',
      '?region=FR&limit=2',
      '?limit=0',
      '?members=p1,p2&member=p1',
      '?member=nobody',
      '?members=',
    ]) {
      await call('GET /v1/boards/:boardId/standings', `/v1/boards/arena/standings${query}`);
    }
    await call('GET /v1/boards/:boardId/standings', '/v1/boards/arena/standings?period=1999-01');
    // arena was replaced by a definition without `regions`: it ranks no region.
    const ranked = await call('GET /v1/boards/:boardId/regions', '/v1/boards/arena/regions');
    expect(ranked.body.regions).toEqual([]);
    await call('GET /v1/boards/:boardId/regions', '/v1/boards/arena/regions?period=1999-01');
    await call('GET /v1/boards/:boardId/regions', `/v1/boards/arena/regions?period=${'x'.repeat(40)}`);
    await call('GET /v1/boards/:boardId/standings/:memberId', '/v1/boards/arena/standings/p2');
    await call('GET /v1/boards/:boardId/standings/:memberId', '/v1/boards/arena/standings/nobody');
    await call('GET /v1/boards/:boardId/standings/:memberId/around', '/v1/boards/arena/standings/p2/around?radius=1');
    await call('GET /v1/boards/:boardId/standings/:memberId/around', '/v1/boards/arena/standings/p2/around?radius=99');
    await call(
      'GET /v1/boards/:boardId/standings/:memberId/following',
      '/v1/boards/arena/standings/p1/following?limit=10',
    );
    await call('GET /v1/boards/:boardId/standings/:memberId/goals', '/v1/boards/arena/standings/p1/goals');
    await call(
      'GET /v1/boards/:boardId/standings/:memberId/goals',
      '/v1/boards/arena/standings/nobody/goals?region=FR',
    );
    await call('GET /v1/boards/:boardId/standings/:memberId/goals', '/v1/boards/arena/standings/p1/goals?region=XX%20');
    await call('GET /v1/boards/:boardId/cutoffs', '/v1/boards/arena/cutoffs?ranks=1,2,50&percents=1,50,100');
    await call('GET /v1/boards/:boardId/cutoffs', '/v1/boards/arena/cutoffs');
    await call('GET /v1/boards/:boardId/cutoffs', '/v1/boards/none/cutoffs?ranks=1');
    await call('PUT /v1/boards/:boardId', '/v1/boards/cup', { aggregation: 'best', maxMembers: 2 });
    await call('POST /v1/boards/:boardId/entrants/:memberId', '/v1/boards/cup/entrants/p1');
    await call('POST /v1/boards/:boardId/entrants/:memberId', '/v1/boards/cup/entrants/p1');
    await call('POST /v1/boards/:boardId/entrants/:memberId', '/v1/boards/cup/entrants/p2');
    await call('POST /v1/boards/:boardId/entrants/:memberId', '/v1/boards/cup/entrants/p3').then((r) =>
      expect(r.body.error).toBe('board_full'),
    );
    await call('POST /v1/boards/:boardId/entrants/:memberId', '/v1/boards/none/entrants/p3');
    await call('POST /v1/boards/:boardId/entrants/:memberId', '/v1/boards/cup/entrants/bad%20id');
    const entrants = await call('GET /v1/boards/:boardId/entrants', '/v1/boards/cup/entrants?limit=1');
    await call(
      'GET /v1/boards/:boardId/entrants',
      `/v1/boards/cup/entrants?limit=1&cursor=${entrants.body.nextCursor}`,
    );
    await call('GET /v1/boards/:boardId/entrants', '/v1/boards/cup/entrants?cursor=x');
    await call('GET /v1/boards/:boardId/entrants', '/v1/boards/cup/entrants?period=1999-01');
    await call('GET /v1/boards/:boardId/entrants', '/v1/boards/arena/entrants');
    await call('PUT /v1/boards/:boardId', '/v1/boards/ladder', {
      aggregation: 'sum',
      league: { tiers: ['low', 'high'], bucketSize: 2, promote: 1, relegate: 1 },
    });
    await call('POST /v1/events', '/v1/events?wait=true', {
      board: 'ladder',
      member: 'p1',
      value: 3,
      idempotencyKey: 'ladder-1',
    });
    await call('GET /v1/boards/:boardId/standings/:memberId/league', '/v1/boards/ladder/standings/p1/league');
    await call('POST /v1/events', '/v1/events?wait=true', {
      board: 'ladder',
      member: 'p2',
      value: 1,
      idempotencyKey: 'ladder-2',
    });
    await call('GET /v1/boards/:boardId/standings/:memberId/goals', '/v1/boards/ladder/standings/p2/goals').then((r) =>
      expect(r.body.league).toMatchObject({ zone: 'promote', rank: 1, score: 3, needed: 4, gap: 3 }),
    );
    await call('GET /v1/boards/:boardId/standings/:memberId/league', '/v1/boards/ladder/standings/p2/league');
    await call('GET /v1/boards/:boardId/standings/:memberId/league', '/v1/boards/arena/standings/p1/league');
    await call(
      'GET /v1/boards/:boardId/standings/:memberId/league',
      '/v1/boards/ladder/standings/p1/league?period=1999-01',
    );
    await call('GET /v1/boards/:boardId/league/:bucket', '/v1/boards/ladder/league/low-1');
    await call('GET /v1/boards/:boardId/league/:bucket', '/v1/boards/ladder/league/nope-1');
    await call('GET /v1/members/:memberId/leagues', '/v1/members/p1/leagues');
    await call('GET /v1/members/:memberId/leagues', '/v1/members/bad%20id/leagues');
    // Streams on a board of their own, with scores known here: s1 7, s2 3.
    await call('PUT /v1/boards/:boardId', '/v1/boards/live', { aggregation: 'sum', graceSeconds: 0 });
    const scores = [
      { member: 's1', value: 7 },
      { member: 's2', value: 3 },
    ];
    await call('POST /v1/events', '/v1/events?wait=true', {
      events: scores.map((e) => ({ board: 'live', ...e, idempotencyKey: `live-${e.member}` })),
    });
    const standing = await callStream(
      'GET /v1/boards/:boardId/standings/:memberId/stream',
      '/v1/boards/live/standings/s2/stream',
    );
    expect(standing.status, JSON.stringify(standing.body)).toBe(200);
    expect(standing.messages[0]).toMatchObject({
      event: 'standing',
      data: { member: 's2', rank: 2, score: 3, total: 2 },
    });
    await callStream('GET /v1/boards/:boardId/standings/:memberId/stream', '/v1/boards/none/standings/s2/stream');
    await callStream('GET /v1/boards/:boardId/standings/:memberId/stream', '/v1/boards/live/standings/s2/stream', {
      key: 'not-a-key',
    });
    const top = await callStream(
      'GET /v1/boards/:boardId/standings/stream',
      '/v1/boards/live/standings/stream?limit=2',
    );
    expect(top.messages[0]!.event).toBe('top');
    expect(top.messages[0]!.data.entries.map((e: { member: string; score: number }) => [e.member, e.score])).toEqual([
      ['s1', 7],
      ['s2', 3],
    ]);
    await callStream('GET /v1/boards/:boardId/standings/stream', '/v1/boards/live/standings/stream?limit=0');
    await call('GET /v1/members/:memberId', '/v1/members/p1');
    await call('GET /v1/members/:memberId', '/v1/members/ghost');
    await call('POST /v1/members/:memberId/exclusion', '/v1/members/p3/exclusion', { reason: 'cheating' });
    await call('POST /v1/members/:memberId/exclusion', '/v1/members/p3/exclusion', {});
    await call('GET /v1/members/:memberId', '/v1/members/p3');
    await call('DELETE /v1/members/:memberId/exclusion', '/v1/members/p3/exclusion');
    await call('POST /v1/members/:memberId/exclusion', '/v1/members/p3/exclusion', { reason: 'again' });
    await call('DELETE /v1/members/:memberId/exclusion', '/v1/members/p3/exclusion', { reason: '' });
    await call('DELETE /v1/members/:memberId/exclusion', '/v1/members/p3/exclusion', { reason: 'appeal upheld' });
    await call('GET /v1/members/:memberId/standings', '/v1/members/p1/standings');
    await call('GET /v1/members/:memberId/standings', '/v1/members/p1/standings?period=2026-11');

    // Close November: final results, awards and reports.
    h.clock.set('2026-12-01T00:00:01Z');
    await runTick(h.ctx);
    await call('GET /v1/boards/:boardId/periods', '/v1/boards/arena/periods?limit=5');
    await call('GET /v1/boards/:boardId/periods', '/v1/boards/arena/periods?limit=-1');
    await call(
      'GET /v1/boards/:boardId/periods/:periodKey/results',
      '/v1/boards/arena/periods/2026-11/results?category=ranked',
    );
    await call('GET /v1/boards/:boardId/periods/:periodKey/results', '/v1/boards/arena/periods/2026-12/results');
    await call('GET /v1/boards/:boardId/standings', '/v1/boards/arena/standings?period=2026-11');
    await call('GET /v1/boards/:boardId/regions', '/v1/boards/arena/regions?period=2026-11');
    // A closed period's stream: its final state, then `closed`, then the server ends it.
    const closed = await callStream(
      'GET /v1/boards/:boardId/standings/stream',
      '/v1/boards/live/standings/stream?period=2026-11',
      { untilEnd: true },
    );
    expect(closed.messages.map((m) => m.event)).toEqual(['top', 'closed']);
    expect(closed.messages[0]!.data.entries.map((e: { member: string }) => e.member)).toEqual(['s1', 's2']);
    await call('POST /v1/events/:idempotencyKey/void', '/v1/events/c-2/void', { reason: 'too late' });
    await call('DELETE /v1/boards/:boardId/members/:memberId', '/v1/boards/arena/members/p1', { reason: 'smurf' });
    await call('DELETE /v1/boards/:boardId/members/:memberId', '/v1/boards/arena/members/p1?period=2026-11', {
      reason: 'final',
    });
    await call('POST /v1/boards/:boardId/periods/:periodKey/close', '/v1/boards/arena/periods/2026-11/close', {
      reason: 'again',
    });
    await call('POST /v1/boards/:boardId/periods/:periodKey/close', '/v1/boards/arena/periods/2026-12/close', {});
    await call('POST /v1/boards/:boardId/periods/:periodKey/close', '/v1/boards/arena/periods/2026-12/close', {
      reason: 'season stopped',
    });
    await call('GET /v1/members/:memberId/awards', '/v1/members/p1/awards');
    await call('GET /v1/members/:memberId/notifications', '/v1/members/p1/notifications?limit=5');
    await call('GET /v1/members/:memberId/notifications', '/v1/members/p1/notifications?limit=x');
    const history = await call('GET /v1/members/:memberId/events', '/v1/members/p1/events?limit=1');
    await call('GET /v1/members/:memberId/events', `/v1/members/p1/events?limit=1&cursor=${history.body.nextCursor}`);
    await call('GET /v1/members/:memberId/events', '/v1/members/p1/events?cursor=x');

    const rebuild = await call('POST /v1/admin/rebuilds', '/v1/admin/rebuilds', { board: 'arena' });
    await h.drain();
    await call('GET /v1/admin/rebuilds/:rebuildId', `/v1/admin/rebuilds/${rebuild.body.rebuildId}`);
    await call('GET /v1/admin/rebuilds/:rebuildId', '/v1/admin/rebuilds/00000000-0000-0000-0000-000000000000');
    await call('POST /v1/admin/rebuilds', '/v1/admin/rebuilds', { board: 'none' });
    const key = await call('POST /v1/admin/keys', '/v1/admin/keys', { name: 'reader', role: 'read' });
    await call('POST /v1/admin/keys', '/v1/admin/keys', { name: 'reader', role: 'owner' });
    await call('GET /v1/boards', '/v1/boards', undefined, 'not-a-key');
    await call('PUT /v1/boards/:boardId', '/v1/boards/arena', { aggregation: 'sum' }, key.body.key);
    await call('DELETE /v1/admin/keys/:keyId', `/v1/admin/keys/${key.body.id}`);
    await call('DELETE /v1/admin/keys/:keyId', `/v1/admin/keys/${key.body.id}`);
    await call('GET /v1/admin/stats', '/v1/admin/stats');
    await call('GET /v1/admin/stats', '/v1/admin/stats?from=yesterday');
    await call('GET /metrics', '/metrics');
    await call('GET /healthz', '/healthz', undefined, null);
    await call('GET /readyz', '/readyz', undefined, null);
    const erasure = await call('DELETE /v1/members/:memberId', '/v1/members/p2');
    await call('DELETE /v1/members/:memberId', '/v1/members/nobody-at-all');
    await h.drain();
    await call('GET /v1/admin/erasures/:erasureId', `/v1/admin/erasures/${erasure.body.erasureId}`);
    await call('GET /v1/admin/erasures/:erasureId', '/v1/admin/erasures/not-an-erasure');

    const web = createWebApp(h.ctx);
    try {
      const served = routesOf(web).filter((r) => !UNDOCUMENTED.has(r));
      const documented = Object.entries<any>(doc.paths)
        .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`))
        .sort();
      expect(documented).toEqual(served);
      expect([...covered.keys()].sort()).toEqual(served);
    } finally {
      await web.close();
    }
  });
});
