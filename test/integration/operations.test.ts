import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { ADMIN_KEY, createHarness, envForChild, type Harness } from '../support/harness.js';
import { startLaurel, waitForHttp } from '../support/laurel-process.js';
import { freePort } from '../support/free-port.js';
import { buildProgram } from '../../src/cli/program.js';
import { scanMatching } from '../../src/storage/redis/maintenance.js';
import { launchBrowser } from '../support/browser.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const run = promisify(execFile);

let h: Harness;
let readKey: string;
beforeAll(async () => {
  h = await createHarness();
  readKey = (await h.api('POST', '/v1/admin/keys', { name: 'dashboard', role: 'read' })).body.key;
});
afterAll(() => h.close());

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('metrics', () => {
  it('exposes Laurel metrics to admins, and they move', async () => {
    expect((await h.api('GET', '/metrics', undefined, null)).status).toBe(401);
    expect((await h.api('GET', '/metrics', undefined, readKey)).status).toBe(403);
    const before = (await h.api('GET', '/metrics')).body as string;
    for (const name of [
      'laurel_event_visible_lag_seconds',
      'laurel_http_request_duration_seconds',
      'laurel_events_total',
      'laurel_queue_jobs',
      'laurel_rebuild_scope_duration_seconds',
      'laurel_period_close_duration_seconds',
    ]) {
      expect(before).toContain(`# TYPE ${name}`);
    }
    await h.api('PUT', '/v1/boards/metered', { aggregation: 'sum' });
    const events = [1, 2, 3].map((i) => ({ board: 'metered', member: `m${i}`, value: i, idempotencyKey: `met-${i}` }));
    await h.api('POST', '/v1/events?wait=true', { events });
    await h.api('POST', '/v1/events?wait=true', { events: [events[0]] });
    await h.api('GET', '/v1/boards/metered/standings');
    const after = (await h.api('GET', '/metrics')).body as string;
    expect(
      metricValue(after, 'laurel_events_total', 'outcome="applied",reason=""') -
        metricValue(before, 'laurel_events_total', 'outcome="applied",reason=""'),
    ).toBe(3);
    expect(metricValue(after, 'laurel_events_total', 'outcome="duplicate",reason=""')).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(after, 'laurel_event_visible_lag_seconds_count') -
        metricValue(before, 'laurel_event_visible_lag_seconds_count'),
    ).toBe(3);
    expect(after).toMatch(
      /laurel_http_request_duration_seconds_count\{method="GET",route="\/v1\/boards\/:boardId\/standings",status="200"\} [1-9]/,
    );
    expect(after).toMatch(/laurel_queue_jobs\{queue="score-events",state="waiting"\} \d+/);
  });
});

describe('health', () => {
  it('answers 503 on /readyz, naming the part, while Redis is down', async () => {
    const down = await createHarness({
      workers: false,
      redisReachable: false,
      env: { REDIS_URL: 'redis://127.0.0.1:1/0' },
    });
    try {
      const res = await down.api('GET', '/readyz', undefined, null);
      expect(res.status).toBe(503);
      expect(res.body.failing).toEqual(['redis', 'leaderboard-redis']);
      expect((await down.api('GET', '/healthz', undefined, null)).status).toBe(200);
    } finally {
      await down.close();
    }
  });
});

describe('Bull Board', () => {
  it('is served to admin keys only', async () => {
    const basic = (key: string) => `Basic ${Buffer.from(`admin:${key}`).toString('base64')}`;
    const page = (auth?: string) =>
      fetch(`${h.baseUrl}/admin/queues`, { headers: auth ? { authorization: auth } : {} });
    const anonymous = await page();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await page(basic('wrong-key'))).status).toBe(401);
    expect((await page(basic(readKey))).status).toBe(403);
    expect((await page(basic(ADMIN_KEY))).status).toBe(200);
    const api = await fetch(`${h.baseUrl}/admin/queues/api/queues`, { headers: { authorization: basic(ADMIN_KEY) } });
    const names = ((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort();
    expect(names).toEqual(['periods', 'rebuild', 'score-events', 'webhooks']);
  });

  it('lets a browser log in with the admin key and see the queues, and refuses it without', async () => {
    const browser = await launchBrowser();
    try {
      // Without credentials the browser gets the 401 challenge and no page.
      const refused = await browser.newContext();
      const outcome = await (await refused.newPage()).goto(`${h.baseUrl}/admin/queues`).then(
        (response) => `status ${response?.status()}`,
        (err: Error) => err.message,
      );
      expect(outcome).toMatch(/status 401|ERR_INVALID_AUTH_CREDENTIALS/);
      const admin = await browser.newContext({ httpCredentials: { username: 'admin', password: ADMIN_KEY } });
      const page = await admin.newPage();
      await page.goto(`${h.baseUrl}/admin/queues`);
      await page.getByText('score-events').first().waitFor({ timeout: 20_000 });
      expect(await page.getByText('rebuild').count()).toBeGreaterThan(0);
    } finally {
      await browser.close();
    }
  });
});

describe('OpenAPI', () => {
  it('publishes the contract generated from the zod schemas, and a docs page', async () => {
    const doc = (await h.api('GET', '/openapi.json', undefined, null)).body;
    expect(doc.openapi).toBe('3.1.0');
    for (const p of [
      '/v1/events',
      '/v1/boards/{boardId}',
      '/v1/boards/{boardId}/standings/{memberId}/following',
      '/v1/admin/rebuilds',
    ]) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
    const event = doc.paths['/v1/events'].post.requestBody.content['application/json'].schema;
    expect(event).toEqual({ $ref: '#/components/schemas/ScoreEvents' });
    expect(doc.components.schemas.ScoreEvent.required).toContain('idempotencyKey');
    const docs = await fetch(`${h.baseUrl}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  });
});

describe('the laurel CLI', () => {
  const env = () => ({ ...process.env, ...envForChild(h.env), LOG_LEVEL: 'silent' });

  /** Runs `laurel ...args` in this process, with the harness's environment; resolves to what it printed. */
  async function laurel(...args: string[]): Promise<string> {
    const vars = { ...envForChild(h.env), LOG_LEVEL: 'silent' };
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    Object.assign(process.env, vars);
    const printed: string[] = [];
    const log = vi
      .spyOn(console, 'log')
      .mockImplementation((...parts: unknown[]) => void printed.push(parts.join(' ')));
    try {
      await buildProgram((root) => root.exitOverride()).parseAsync(['node', 'laurel', ...args]);
    } finally {
      log.mockRestore();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    return printed.join('\n');
  }

  it('verify lists scopes Redis does not hold apart from differences, exits 0 for them, and can rebuild them', async () => {
    expect((await h.api('PUT', '/v1/boards/vfy', { aggregation: 'sum', period: 'all' })).status).toBe(201);
    await h.postEvents([
      { board: 'vfy', member: 'a', value: 3, idempotencyKey: 'vfy-1' },
      { board: 'vfy', member: 'b', value: 1, idempotencyKey: 'vfy-2' },
    ]);
    // The period's keys lost (as after a flush); nobody has read it since.
    const base = h.ctx.leaderboard.keys.period('vfy', 'all');
    const keys = await scanMatching(h.ctx.leaderboard.redis, [`${base.replace(/[{}|]/g, (c) => `\\${c}`)}*`]);
    expect(keys.length).toBeGreaterThan(0);
    await h.ctx.leaderboard.redis.unlink(...keys);
    const verify = (...args: string[]) =>
      run(TSX, ['src/cli/laurel.ts', 'verify', '--board', 'vfy', ...args], { cwd: ROOT, env: env() });
    const missing = await verify();
    expect(missing.stdout).toContain('vfy all all/world: not in Redis (read from Postgres, rebuilt on first read)');
    expect(missing.stdout).toContain('no difference in 1 scope(s)');
    const refilled = await verify('--rebuild-missing');
    expect(refilled.stdout).toContain('1 rebuild(s) queued');
    await h.drain();
    const after = await verify();
    expect(after.stdout).not.toContain('not in Redis');
    expect(after.stdout).toContain('no difference in 1 scope(s)');
    // A real difference still fails.
    await h.ctx.leaderboard.redis.zadd(h.ctx.leaderboard.keys.scope('vfy', 'all', 'all'), '-99', 'b');
    await expect(verify()).rejects.toMatchObject({ code: 1 });
  });

  it('has --help on every command', async () => {
    for (const args of [
      [],
      ['migrate'],
      ['rebuild'],
      ['verify'],
      ['keys', 'create'],
      ['keys', 'list'],
      ['keys', 'revoke'],
      ['boards', 'apply'],
      ['partitions', 'archive'],
      ['demo'],
    ]) {
      let out = '';
      const program = buildProgram((root) =>
        root.exitOverride().configureOutput({ writeOut: (text) => (out += text), writeErr: (text) => (out += text) }),
      );
      await expect(program.parseAsync(['node', 'laurel', ...args, '--help'])).rejects.toMatchObject({
        code: 'commander.helpDisplayed',
      });
      expect(out).toMatch(/^Usage: laurel/);
      expect(out).toContain(args.at(-1) ?? 'laurel');
    }
  });

  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      let out = '';
      const program = buildProgram((root) =>
        root.exitOverride().configureOutput({ writeOut: (text) => (out += text) }),
      );
      await expect(program.parseAsync(['node', 'laurel', flag])).rejects.toMatchObject({ code: 'commander.version' });
      expect(out).toBe(`${version}\n`);
    }
  });

  it('keys list shows every key, revoked ones too, without the key or its hash', async () => {
    const created = await laurel('keys', 'create', '--name', 'listed key', '--role', 'ingest');
    const key = /key:\s+(\S+)/.exec(created)![1]!;
    const id = /id:\s+(\S+)/.exec(created)![1]!;
    await laurel('keys', 'revoke', id);
    const active = await laurel('keys', 'create', '--name', 'still active', '--role', 'metrics');
    const activeId = /id:\s+(\S+)/.exec(active)![1]!;

    const [header, ...rows] = (await laurel('keys', 'list')).split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['id', 'name', 'role', 'created', 'revoked']);
    const stored = await h.ctx.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    // One row per stored key, oldest first, its columns lined up under the header's.
    expect(rows.map((r) => r.split(/\s{2,}/)[0])).toEqual(stored.map((k) => k.id));
    for (const row of stored) {
      const line = rows.find((r) => r.startsWith(row.id))!;
      expect(line.split(/\s{2,}/)).toEqual([
        row.id,
        row.name,
        row.role,
        row.created_at.toISOString(),
        row.revoked_at?.toISOString() ?? '-',
      ]);
      expect(line.slice(header!.indexOf('role')).startsWith(`${row.role} `)).toBe(true);
    }
    expect(rows.find((r) => r.startsWith(id))).toMatch(/ listed key {2,}ingest {2,}\S+ {2,}\d{4}-\d\d-\d\dT/);
    expect(rows.find((r) => r.startsWith(activeId))).toMatch(/ still active {2,}metrics {2,}\S+ {2,}-$/);
    const printed = rows.join('\n');
    expect(printed).not.toContain(key);
    for (const row of stored) expect(printed).not.toContain(row.key_hash);
  });

  it('names the board and the field at fault when a definition is invalid', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'laurel-'));
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, 'boards:\n  - id: bad-board\n    aggregation: median\n');
    const failed = await run(TSX, ['src/cli/laurel.ts', 'boards', 'apply', file], { cwd: ROOT, env: env() }).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('laurel: board "bad-board": invalid board definition');
    expect(failed?.stderr).toMatch(/\n {2}aggregation: /);
  }, 60000);

  it('applies boards from YAML and creates and revokes keys', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'laurel-'));
    const file = path.join(dir, 'boards.yaml');
    writeFileSync(
      file,
      'boards:\n  - id: from-yaml\n    aggregation: best\n    period: week\n    categories: [a, b]\n',
    );
    expect(await laurel('boards', 'apply', file)).toContain('created from-yaml');
    expect((await h.api('GET', '/v1/boards/from-yaml')).body).toMatchObject({
      aggregation: 'best',
      period: 'week',
      categories: ['a', 'b'],
    });
    const created = await laurel('keys', 'create', '--name', 'cli-key', '--role', 'read');
    const key = /key:\s+(\S+)/.exec(created)![1]!;
    const id = /id:\s+(\S+)/.exec(created)![1]!;
    expect((await h.api('GET', '/v1/boards', undefined, key)).status).toBe(200);
    expect(await laurel('keys', 'revoke', id)).toBe(`revoked ${id}`);
    const revoked = await h.ctx.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(revoked.revoked_at).not.toBeNull();
  });
});

describe('graceful shutdown', () => {
  it('loses nothing when the process gets SIGTERM in the middle of a stream of batches', async () => {
    await h.workers!.close(); // the child process below does the work
    const port = await freePort();
    const start = () =>
      startLaurel('all', { ...envForChild(h.env), PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'silent' });
    const ready = () => waitForHttp(`http://127.0.0.1:${port}/readyz`, 60_000);
    await h.api('PUT', '/v1/boards/shutdown', { aggregation: 'sum' });
    let child = start();
    await ready();
    let accepted = 0;
    let stopped: Promise<number | string | null> | undefined;
    for (let b = 0; b < 20; b += 1) {
      const events = Array.from({ length: 200 }, (_, i) => ({
        board: 'shutdown',
        member: `s${i % 50}`,
        value: 1,
        idempotencyKey: `sd-${b}-${i}`,
      }));
      const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      }).catch(() => null);
      if (res?.status === 202) accepted += events.length;
      if (b === 10) stopped = child.stop('SIGTERM');
    }
    expect(await stopped).toBe(0);
    child = start();
    try {
      await ready();
      for (let i = 0; i < 300; i += 1) {
        const counts = await h.ctx.scoreQueue.getJobCounts('waiting', 'active', 'delayed');
        if (counts.waiting === 0 && counts.active === 0 && counts.delayed === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const { rows } = await sql<{ events: number; total: number }>`
        SELECT (SELECT count(*)::int FROM score_events WHERE board_id = 'shutdown') AS events,
               (SELECT coalesce(sum(value), 0)::int FROM member_aggregates WHERE board_id = 'shutdown' AND category = 'all') AS total`.execute(
        h.ctx.db,
      );
      expect(accepted).toBeGreaterThan(0);
      expect(rows[0]).toEqual({ events: accepted, total: accepted });
    } finally {
      await child.stop('SIGTERM');
    }
  }, 180000);
});
