import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, envForChild, type Harness } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { startLaurel, waitForHttp, type LaurelProcess } from '../support/laurel-process.js';
import { launchBrowser } from '../support/browser.js';

/**
 * The HTTP server itself, as production runs it: a real web process spoken to over raw
 * sockets, so that what is measured is what Node and Laurel do with slow, missing or
 * hostile request bodies and idle connections.
 */

interface RawAnswer {
  /** Everything the server sent before it closed the connection (or before `until` matched). */
  text: string;
  status: number | null;
  closed: boolean;
}

/** Sends raw bytes and collects the answer until `until` matches it or the server closes. */
function rawExchange(
  port: number,
  send: string | Buffer,
  options: { until?: RegExp; giveUpMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ text, status: status ? Number(status[1]) : null, closed });
    };
    // The bound only keeps a broken server from hanging the suite; nothing asserts on it.
    const timer = setTimeout(() => finish(false), options.giveUpMs ?? 15_000);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (options.until?.test(text)) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? finish(true) : reject(err)));
    socket.write(send);
  });
}

const headersEnd = /\r\n\r\n[\s\S]*\}/;

describe('a real web process under hostile HTTP', () => {
  let h: Harness;
  let web: LaurelProcess;
  let port: number;
  const basic = `Basic ${Buffer.from(`admin:${ADMIN_KEY}`).toString('base64')}`;

  beforeAll(async () => {
    h = await createHarness({ workers: false });
    port = await freePort();
    web = startLaurel('web', {
      ...envForChild(h.env),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
      HTTP_MAX_CONNECTIONS: '20',
    });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
  });
  afterAll(async () => {
    await web?.stop('SIGKILL');
    await h?.close();
  });

  /** An admin's write with a JSON body: a read key made through the API. */
  const createReadKey = (name: string) =>
    fetch(`http://127.0.0.1:${port}/v1/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, role: 'read' }),
    });

  it('refuses a write without a key before reading its body: a declared body that never comes gets its 401 at once', async () => {
    const answer = await rawExchange(
      port,
      'POST /v1/admin/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
      {
        until: headersEnd,
        giveUpMs: 1500,
      },
    );
    expect(answer.status).toBe(401);
    expect(answer.text).toMatch(/"error":"unauthorized"/);
    expect(answer.text).toMatch(/WWW-Authenticate: Bearer/i);
  });

  it('refuses a write with a read key before reading its body: a declared body that never comes gets its 403 at once', async () => {
    // Read keys ship inside game clients, so anyone may hold one.
    const created = await createReadKey('game client');
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    for (const request of ['POST /v1/admin/keys', 'PUT /v1/boards/hardening', 'POST /v1/events']) {
      const answer = await rawExchange(
        port,
        `${request} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
        { until: headersEnd, giveUpMs: 1500 },
      );
      expect(answer.status, request).toBe(403);
      expect(answer.text).toMatch(/"error":"forbidden"/);
      expect(answer.text).toMatch(/Connection: close/i);
    }
    // The same key still reads.
    expect(
      (await fetch(`http://127.0.0.1:${port}/v1/boards`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
  });

  it('answers 401 to a deeply nested body without a key while the body is still arriving, so it is never parsed', async () => {
    // The first 64 KB of a 1 MB body nested 400k levels: had the server waited for the
    // body, it would still be waiting, since the rest is never sent.
    const head = `POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024 - 1}\r\n\r\n`;
    const answer = await rawExchange(port, Buffer.concat([Buffer.from(head), Buffer.alloc(64 * 1024, '[')]), {
      until: headersEnd,
      giveUpMs: 1500,
    });
    expect(answer.status).toBe(401);
  });

  it('never reads the body of a GET, and closes the connection instead of waiting for it', async () => {
    const answer = await rawExchange(
      port,
      'GET /openapi.json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":',
      {
        giveUpMs: 1500,
      },
    );
    expect(answer).toMatchObject({ status: 200, closed: true });
  });

  it('still reads the body of a keyed write, and keeps public probes keyless', async () => {
    const created = await createReadKey('hardening');
    expect(created.status).toBe(201);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'GET' })).status).toBe(200);
  });

  it('closes a connection whose headers trickle in past HTTP_HEADERS_TIMEOUT_MS', async () => {
    const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    expect(answer.closed).toBe(true);
    expect(answer.status).toBe(408);
  });

  it('closes a connection whose body never finishes within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const answer = await rawExchange(
      port,
      `POST /v1/admin/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"name":`,
    );
    expect(answer.closed).toBe(true);
    expect(answer.status).toBe(408);
  });

  it('closes an idle keep-alive connection after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.closed).toBe(true);
    expect(answer.text).toMatch(/Keep-Alive: timeout=1/i);
  });

  describe('Bull Board', () => {
    const addJob = (headers: Record<string, string>, body = '') =>
      rawExchange(
        port,
        `POST /admin/queues/api/queues/periods/add HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${basic}\r\nConnection: close\r\n` +
          `${Object.entries(headers)
            .map(([k, v]) => `${k}: ${v}\r\n`)
            .join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    const periodJobs = async () => Object.values(await h.ctx.periodsQueue.getJobCounts()).reduce((a, b) => a + b, 0);

    it('refuses a cross-site write that a browser would send with its cached login, and adds no job', async () => {
      const before = await periodJobs();
      const forged = await addJob({
        'Content-Type': 'text/plain',
        Origin: 'https://evil.example',
        'Sec-Fetch-Site': 'cross-site',
      });
      expect(forged.status).toBe(403);
      const foreignOrigin = await addJob(
        { 'Content-Type': 'application/json', Origin: 'https://evil.example' },
        '{"name":"x","data":{}}',
      );
      expect(foreignOrigin.status).toBe(403);
      const crossSite = await addJob(
        { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'cross-site' },
        '{"name":"x","data":{}}',
      );
      expect(crossSite.status).toBe(403);
      expect(await periodJobs()).toBe(before);
    });

    it('is read-only unless BULL_BOARD_WRITE=true, while its pages and queue list still load', async () => {
      const before = await periodJobs();
      const write = await addJob({ 'Content-Type': 'application/json' }, '{"name":"x","data":{}}');
      expect(write.status).toBe(403);
      expect(write.text).toMatch(/BULL_BOARD_WRITE/);
      const list = await fetch(`http://127.0.0.1:${port}/admin/queues/api/queues`, {
        headers: { authorization: basic },
      });
      expect(list.status).toBe(200);
      expect(await periodJobs()).toBe(before);
    });
  });
});

describe('Bull Board with BULL_BOARD_WRITE=true', () => {
  let h: Harness;
  let web: LaurelProcess;
  let port: number;
  const basic = `Basic ${Buffer.from(`admin:${ADMIN_KEY}`).toString('base64')}`;

  beforeAll(async () => {
    h = await createHarness({ workers: false });
    port = await freePort();
    web = startLaurel('web', {
      ...envForChild(h.env),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      BULL_BOARD_WRITE: 'true',
    });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
  });
  afterAll(async () => {
    await web?.stop('SIGKILL');
    await h?.close();
  });

  const add = (headers: Record<string, string>, body?: string) =>
    fetch(`http://127.0.0.1:${port}/admin/queues/api/queues/rebuild/add`, {
      method: 'POST',
      headers: { authorization: basic, ...headers },
      body,
    });
  const rebuildJobs = async () => Object.values(await h.ctx.rebuildQueue.getJobCounts()).reduce((a, b) => a + b, 0);

  it('refuses body-less and non-JSON writes, and cross-site ones, adding nothing', async () => {
    const before = await rebuildJobs();
    expect((await add({ 'content-type': 'text/plain' }, '')).status).toBe(415);
    expect((await add({})).status).toBe(415);
    expect((await add({ 'content-type': 'text/plain' }, '{"name":"x"}')).status).toBe(415);
    expect(
      (await add({ 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }, '{"name":"x","data":{}}'))
        .status,
    ).toBe(403);
    expect(await rebuildJobs()).toBe(before);
  });

  it('refuses a body-less write that states no JSON content type and no same-origin page (a queue action by any client)', async () => {
    const pause = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}/admin/queues/api/queues/rebuild/pause`, {
        method: 'PUT',
        headers: { authorization: basic, ...headers },
      });
    expect((await pause({})).status).toBe(415);
    expect((await pause({ 'content-type': 'text/plain' })).status).toBe(415);
    expect(await h.ctx.rebuildQueue.isPaused()).toBe(false);
    // A client that states JSON may act.
    expect((await pause({ 'content-type': 'application/json' })).status).toBe(200);
    expect(await h.ctx.rebuildQueue.isPaused()).toBe(true);
    await h.ctx.rebuildQueue.resume();
  });

  it("keeps Bull Board's own page working: its body-less PUT from a real browser carries the page's Origin and passes", async () => {
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ httpCredentials: { username: 'admin', password: ADMIN_KEY } });
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${port}/admin/queues`);
      // As Bull Board's client (axios over XMLHttpRequest) sends its pause: PUT, no data, no content type.
      const status = await page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const xhr = new (globalThis as any).XMLHttpRequest();
            xhr.open('PUT', '/admin/queues/api/queues/rebuild/pause');
            xhr.onloadend = () => resolve(xhr.status);
            xhr.send();
          }),
      );
      expect(status).toBe(200);
      expect(await h.ctx.rebuildQueue.isPaused()).toBe(true);
    } finally {
      await browser.close();
      await h.ctx.rebuildQueue.resume();
    }
  }, 120_000);

  it('lets a same-origin admin add a job with a JSON body', async () => {
    const before = await rebuildJobs();
    const res = await add(
      { 'content-type': 'application/json', origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
      JSON.stringify({ name: 'from-bull-board', data: { note: 'test' } }),
    );
    expect(res.status).toBe(200);
    expect(await rebuildJobs()).toBe(before + 1);
    await h.ctx.rebuildQueue.obliterate({ force: true });
  });
});

describe('a web process at HTTP_MAX_CONNECTIONS', () => {
  let h: Harness;
  let web: LaurelProcess;
  let port: number;

  beforeAll(async () => {
    h = await createHarness({ workers: false });
    port = await freePort();
    web = startLaurel('web', {
      ...envForChild(h.env),
      PORT: String(port),
      LOG_LEVEL: 'info',
      HTTP_MAX_CONNECTIONS: '3',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '60000',
    });
    // Not waitForHttp: its kept-alive connection would take one of the three.
    await web.waitForLog((line) => line.msg === 'http listening');
  });
  afterAll(async () => {
    await web?.stop('SIGKILL');
    await h?.close();
  });

  /** A kept-alive connection that has had one answer, so the server surely counts it. */
  const openIdle = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.once('data', () => resolve(socket));
      socket.once('error', reject);
    });

  it('drops connections beyond the cap without an answer, and serves again once one closes', async () => {
    const idle = [await openIdle(), await openIdle(), await openIdle()];
    const over = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(over).toMatchObject({ status: null, closed: true });
    const closed = new Promise((resolve) => idle[0]!.once('close', resolve));
    idle[0]!.destroy();
    await closed;
    let answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    // The server may see the first socket's close a moment after the client does.
    for (let i = 0; answer.status === null && i < 50; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    }
    expect(answer.status).toBe(200);
    for (const socket of idle) socket.destroy();
  });
});

describe('web cluster processes (WEB_PROCESSES=2)', () => {
  let h: Harness;
  let web: LaurelProcess;
  let port: number;

  beforeAll(async () => {
    h = await createHarness({ workers: false });
    port = await freePort();
    web = startLaurel('web', {
      ...envForChild(h.env),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      WEB_PROCESSES: '2',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
    });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
  });
  afterAll(async () => {
    await web?.stop('SIGTERM');
    await h?.close();
  });

  it('apply the same server limits: trickled headers get 408 from whichever process takes the connection', async () => {
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a')),
    );
    for (const answer of answers) expect(answer).toMatchObject({ status: 408, closed: true });
  });
});
