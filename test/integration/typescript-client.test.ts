import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLaurelClient,
  LaurelError,
  verifyWebhook,
  WebhookVerificationError,
} from '../../clients/typescript/src/index.js';
import { CLIENT_DIR, generateClient } from '../../scripts/generate-client.js';
import type { AppContext } from '../../src/context.js';
import { deliverWebhook, webhookHeaders } from '../../src/services/webhook-delivery.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const PLAYER_TOKEN_SECRET = 'player-token-secret-for-client-tests-0123';

/**
 * A proxy in front of Laurel that fails the first `failures` POSTs to /v1/events in the
 * given way and forwards everything else, recording each body it saw.
 */
async function faultyProxy(target: string, failures: number, mode: '503' | 'hang') {
  const bodies: string[] = [];
  let failed = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      if (req.method === 'POST' && req.url?.startsWith('/v1/events')) bodies.push(raw);
      if (req.method === 'POST' && req.url?.startsWith('/v1/events') && failed < failures) {
        failed += 1;
        if (mode === '503')
          res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"unavailable","message":"down"}');
        // 'hang': never answers; the client's timeout abandons the request.
        return;
      }
      const url = new URL(req.url ?? '/', target);
      const upstream = httpRequest(url, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

const closeServer = (server: Server) => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
};

describe('the generated TypeScript client', () => {
  it('is what the generator produces from the current document', async () => {
    for (const [name, content] of Object.entries(await generateClient())) {
      expect(await readFile(path.join(CLIENT_DIR, name), 'utf8'), `${name}: run npm run generate:client`).toBe(content);
    }
  });

  it('compiles on its own, strict', async () => {
    await run('npx', ['tsc', '-p', path.join(CLIENT_DIR, 'tsconfig.json'), '--noEmit']);
  });
});

describe('the client against a running Laurel', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PLAYER_TOKEN_SECRET } });
  });
  afterAll(() => h.close());

  it('creates a board, posts events, reads standings with typed answers', async () => {
    const laurel = createLaurelClient({ baseUrl: h.baseUrl, apiKey: ADMIN_KEY });
    const board = await laurel.putBoard({
      params: { path: { boardId: 'duel' } },
      body: { aggregation: 'sum', period: 'all' },
    });
    expect(board).toMatchObject({ id: 'duel', aggregation: 'sum', currentPeriod: { key: 'all', state: 'open' } });
    // Typed as the 200 answer: `results` needs no narrowing from the 202 `{ accepted }`.
    const applied = await laurel.postEventsAndWait({
      body: {
        events: [
          { board: 'duel', member: 'ana', value: 7, idempotencyKey: 'duel-1' },
          { board: 'duel', member: 'bo', value: 3, idempotencyKey: 'duel-2' },
        ],
      },
    });
    expect(applied).toEqual({
      results: [
        {
          idempotencyKey: 'duel-1',
          board: 'duel',
          status: 'applied',
          period: 'all',
          score: 7,
          rank: 1,
          previousScore: null,
          previousRank: null,
        },
        {
          idempotencyKey: 'duel-2',
          board: 'duel',
          status: 'applied',
          period: 'all',
          score: 3,
          rank: 2,
          previousScore: null,
          previousRank: null,
        },
      ],
    });
    const page = await laurel.getStandings({ params: { path: { boardId: 'duel' }, query: { limit: 10 } } });
    expect(page.entries.map((e) => [e.rank, e.member, e.score])).toEqual([
      [1, 'ana', 7],
      [2, 'bo', 3],
    ]);
    const me = await laurel.getMemberStanding({ params: { path: { boardId: 'duel', memberId: 'bo' } } });
    expect([me.rank, me.total, me.topPercent]).toEqual([2, 2, 100]);
    // A member without a score is an answer, not a 404.
    const nobody = await laurel.getMemberStanding({ params: { path: { boardId: 'duel', memberId: 'nobody' } } });
    expect([nobody.rank, nobody.score]).toEqual([null, null]);
    // An event stream comes back unread, past the request timeout: its first message is bo's standing.
    const slow = createLaurelClient({ baseUrl: h.baseUrl, apiKey: ADMIN_KEY, timeoutMs: 500 });
    const stream = await slow.streamMemberStanding({ params: { path: { boardId: 'duel', memberId: 'bo' } } });
    const reader = stream.getReader();
    const events: Array<{ event?: string; data: string }> = [];
    const parser = createParser({ onEvent: (e) => events.push(e) });
    try {
      await new Promise((resolve) => setTimeout(resolve, 700));
      while (events.length === 0) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(new TextDecoder().decode(value));
      }
    } finally {
      await reader.cancel();
    }
    expect(events[0]?.event).toBe('standing');
    expect(JSON.parse(events[0]!.data)).toMatchObject({ member: 'bo', rank: 2, score: 3, total: 2 });
    expect(await laurel.getMetrics()).toContain('# HELP');
    const key = await laurel.createKey({ body: { name: 'temp', role: 'read' } });
    expect(await laurel.revokeKey({ params: { path: { keyId: key.id } } })).toBeUndefined();
    // Without waiting: the 202 answer, the batch queued.
    expect(
      await laurel.postEvents({ body: { board: 'duel', member: 'cy', value: 1, idempotencyKey: 'duel-3' } }),
    ).toEqual({
      accepted: 1,
    });
  });

  it('throws the API error shape as a LaurelError', async () => {
    const laurel = createLaurelClient({ baseUrl: h.baseUrl, apiKey: ADMIN_KEY });
    const missing = await laurel.getBoard({ params: { path: { boardId: 'nowhere' } } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(LaurelError);
    expect(missing).toMatchObject({ status: 404, error: 'not_found' });
    const invalid = await laurel
      .postEvents({ body: { board: 'duel', member: 'ana', value: 1, idempotencyKey: 'x', extra: 1 } as never })
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({
      status: 400,
      error: 'validation_failed',
      details: [{ path: 'extra', message: 'unknown field' }],
    });
    const anonymous = createLaurelClient({ baseUrl: h.baseUrl });
    expect(await anonymous.listBoards().catch((e: unknown) => e)).toMatchObject({ status: 401, error: 'unauthorized' });
  });

  it('throws a request that got no answer as a LaurelError with a transport code and its cause', async () => {
    // A port nothing listens on: the connection is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await closeServer(closed);
    const refused = createLaurelClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: ADMIN_KEY, eventAttempts: 2 });
    const err = await refused
      .getMemberStanding({ params: { path: { boardId: 'duel', memberId: 'ana' } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LaurelError);
    expect(err).toMatchObject({ status: 0, code: 'network_error', error: 'network_error' });
    expect((err as LaurelError).cause).toBeInstanceOf(TypeError);
    expect((err as LaurelError).message).toContain('ECONNREFUSED');
    const events = { body: { board: 'duel', member: 'ana', value: 1, idempotencyKey: 'never-sent' } };
    expect(await refused.postEvents(events).catch((e: unknown) => e)).toMatchObject({ code: 'network_error' });

    // A server that never answers: the client's timeout, or the caller's own abort.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    try {
      const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const slow = createLaurelClient({ baseUrl, timeoutMs: 200 });
      expect(await slow.getHealth().catch((e: unknown) => e)).toMatchObject({ status: 0, code: 'timeout' });
      const patient = createLaurelClient({ baseUrl, timeoutMs: 60_000 });
      const aborted = await patient.getHealth({ signal: AbortSignal.timeout(0) }).catch((e: unknown) => e);
      expect(aborted).toBeInstanceOf(LaurelError);
      expect(['aborted', 'timeout']).toContain((aborted as LaurelError).code);
      const controller = new AbortController();
      const pending = patient.getHealth({ signal: controller.signal }).catch((e: unknown) => e);
      setTimeout(() => controller.abort(), 50);
      expect(await pending).toMatchObject({ status: 0, code: 'aborted' });
    } finally {
      await closeServer(silent);
    }
  });

  it('reads as a player with a token a game server minted, and only its own member routes', async () => {
    const server = createLaurelClient({ baseUrl: h.baseUrl, apiKey: ADMIN_KEY });
    await server.putBoard({ params: { path: { boardId: 'arena' } }, body: { aggregation: 'best', period: 'all' } });
    await server.postEventsAndWait({
      body: {
        events: [
          { board: 'arena', member: 'ana', value: 4, idempotencyKey: 'arena-1' },
          { board: 'arena', member: 'bo', value: 9, idempotencyKey: 'arena-2' },
        ],
      },
    });
    const minted = await server.createPlayerToken({ body: { member: 'ana', ttlSeconds: 600 } });
    expect(minted).toMatchObject({ member: 'ana', token: expect.any(String) });

    const game = createLaurelClient({ baseUrl: h.baseUrl, playerToken: minted.token });
    const me = await game.getMemberStanding({ params: { path: { boardId: 'arena', memberId: 'ana' } } });
    expect([me.rank, me.score]).toEqual([2, 4]);
    expect(await game.getMemberStandings({ params: { path: { memberId: 'ana' } } })).toBeTruthy();
    const elses = await game.getMemberStandings({ params: { path: { memberId: 'bo' } } }).catch((e: unknown) => e);
    expect(elses).toMatchObject({ status: 403 });
    const write = await game
      .postEvents({ body: { board: 'arena', member: 'ana', value: 99, idempotencyKey: 'cheat' } })
      .catch((e: unknown) => e);
    expect(write).toMatchObject({ status: 403 });

    // A token source asked before each request, so a game client can renew its token.
    let asked = 0;
    const renewing = createLaurelClient({
      baseUrl: h.baseUrl,
      playerToken: async () => {
        asked += 1;
        return minted.token;
      },
    });
    await renewing.getStandings({ params: { path: { boardId: 'arena' } } });
    await renewing.getStandings({ params: { path: { boardId: 'arena' } } });
    expect(asked).toBe(2);
    expect(() => createLaurelClient({ baseUrl: h.baseUrl, apiKey: ADMIN_KEY, playerToken: minted.token })).toThrow(
      /not both/,
    );
  });

  it('retries POST /v1/events on 503 and on timeouts with the same body, and the events count once', async () => {
    await h.api('PUT', '/v1/boards/retry', { aggregation: 'sum', period: 'all' });
    for (const mode of ['503', 'hang'] as const) {
      const proxy = await faultyProxy(h.baseUrl, 2, mode);
      try {
        const laurel = createLaurelClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, timeoutMs: 1000, retryDelayMs: 10 });
        const events = [{ board: 'retry', member: `m-${mode}`, value: 5, idempotencyKey: `retry-${mode}` }];
        expect(await laurel.postEvents({ params: { query: { wait: 'true' } }, body: { events } })).toMatchObject({
          results: [{ idempotencyKey: `retry-${mode}`, status: 'applied' }],
        });
        expect(proxy.bodies).toHaveLength(3);
        expect(new Set(proxy.bodies).size).toBe(1);
      } finally {
        await closeServer(proxy.server);
      }
    }
    // A hung attempt may have reached Laurel too: still applied once, value 5.
    await h.drain();
    const page = (await h.api('GET', '/v1/boards/retry/standings')).body;
    expect(page.entries.map((e: { member: string; score: number }) => [e.member, e.score])).toEqual([
      ['m-503', 5],
      ['m-hang', 5],
    ]);
  });

  it('gives up after its attempts and reports the last answer', async () => {
    const proxy = await faultyProxy(h.baseUrl, 10, '503');
    try {
      const laurel = createLaurelClient({ baseUrl: proxy.url, apiKey: ADMIN_KEY, eventAttempts: 3, retryDelayMs: 1 });
      const err = await laurel
        .postEvents({ body: { board: 'retry', member: 'x', value: 1, idempotencyKey: 'never' } })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 503, error: 'unavailable' });
      expect(proxy.bodies).toHaveLength(3);
    } finally {
      await closeServer(proxy.server);
    }
  });
});

describe('webhooks (Standard Webhooks)', () => {
  const secret = 'webhook-secret-for-client-tests';
  const body = JSON.stringify({
    id: 'd-1',
    type: 'period.closed',
    createdAt: '2026-12-01T00:00:00.000Z',
    data: { board: 'b' },
  });

  it("the client's verifier accepts Laurel's signature, and refuses tampering, another secret and replays", () => {
    const now = new Date();
    const headers = webhookHeaders(secret, 'd-1', now, body);
    // The signature as the standard defines it, computed here by hand.
    const expected = createHmac('sha256', secret)
      .update(`d-1.${Math.floor(now.getTime() / 1000)}.${body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    expect(verifyWebhook(secret, body, headers)).toMatchObject({ id: 'd-1', type: 'period.closed' });
    expect(() => verifyWebhook(secret, body.replace('"b"', '"c"'), headers)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(`${secret}-other`, body, headers)).toThrow(WebhookVerificationError);
    const old = webhookHeaders(secret, 'd-1', new Date(now.getTime() - 10 * 60_000), body);
    expect(() => verifyWebhook(secret, body, old)).toThrow(/timestamp/i);
  });

  it('the sender does not follow redirects: the signed body goes to WEBHOOK_URL only', async () => {
    let elsewhere = 0;
    const other = createServer((_req, res) => {
      elsewhere += 1;
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/steal`;
    const receiver = createServer((_req, res) => res.writeHead(307, { location: otherUrl }).end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    try {
      const ctx = {
        env: {
          WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
          WEBHOOK_SECRET: secret,
        },
      } as unknown as AppContext;
      const job = { deliveryId: 'd-2', type: 'period.closed' as const, createdAt: new Date().toISOString(), data: {} };
      await expect(deliverWebhook(ctx, job)).rejects.toThrow(/307.*redirect/);
      expect(elsewhere).toBe(0);
    } finally {
      await closeServer(receiver);
      await closeServer(other);
    }
  });
});
