import { request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, envForChild, type Harness } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { startLaurel, waitForHttp, type LaurelProcess } from '../support/laurel-process.js';
import { SLOW_PENDING_MS } from '../../src/http/server.js';

/**
 * The caps on what one key or one address can hold open in a real web process: event
 * streams per key, per address and per process, and connections still sending their
 * headers per address. Loopback has a whole /8, so each client address is its own
 * 127.0.0.x; probes and intake come from 127.0.0.1, which no cap is spent on.
 */

interface OpenStream {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  close(): void;
}

let h: Harness;
let web: LaurelProcess;
let port: number;
const streams: OpenStream[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  h = await createHarness({ workers: false });
  port = await freePort();
  expect((await h.api('PUT', '/v1/boards/sc', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  web = startLaurel('web', {
    ...envForChild(h.env),
    PORT: String(port),
    LOG_LEVEL: 'warn',
    STREAMS_PER_KEY: '3',
    STREAMS_PER_IP: '5',
    STREAMS_MAX: '8',
    HTTP_MAX_CONNECTIONS: '24',
    HTTP_PENDING_CONNECTIONS_PER_IP: '4',
    HTTP_HEADERS_TIMEOUT_MS: '20000',
  });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`);
});

afterAll(async () => {
  for (const s of streams) s.close();
  for (const s of sockets) s.destroy();
  await web?.stop('SIGKILL');
  await h?.close();
});

async function readKey(name: string): Promise<string> {
  const created = await h.api('POST', '/v1/admin/keys', { name, role: 'read' });
  expect(created.status).toBe(201);
  return created.body.key;
}

/** Opens a member stream from `from` on a connection of its own; resolves at its headers (and the body of a refusal). */
function openStream(key: string, from: string, member = 'ann'): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        agent: false,
        path: `/v1/boards/sc/standings/${member}/stream`,
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
      },
      (res) => {
        const stream: OpenStream = {
          status: res.statusCode!,
          headers: res.headers,
          body: '',
          close: () => req.destroy(),
        };
        if (res.statusCode === 200) {
          streams.push(stream);
          return resolve(stream);
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (stream.body += chunk));
        res.on('end', () => resolve(stream));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A connection from `from` that has sent part of its request headers and nothing more. */
function halfSentHeaders(from: string): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from }, () => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      resolve({ socket, closed });
    });
    sockets.push(socket);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

/** The service still answers its probes and takes events while the caps are reached. */
async function stillServing(tag: string): Promise<void> {
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect(health.status).toBe(200);
  const intake = await fetch(`http://127.0.0.1:${port}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [{ board: 'sc', member: 'ann', value: 1, idempotencyKey: `sc-${tag}` }] }),
  });
  expect(intake.status).toBe(202);
}

async function retryUntil<T>(attempt: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await attempt();
  for (let i = 0; !done(value) && i < 100; i += 1) {
    await new Promise((r) => setTimeout(r, 50));
    value = await attempt();
  }
  return value;
}

describe('a web process with stream caps', () => {
  it('refuses a key its fourth stream, an address its sixth and the process its ninth, and keeps serving', async () => {
    const [one, two, three] = [await readKey('sc-1'), await readKey('sc-2'), await readKey('sc-3')];
    // One key, three addresses: the key's cap.
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) expect((await openStream(one, from)).status).toBe(200);
    const keyFull = await openStream(one, '127.0.0.5');
    expect(keyFull.status).toBe(429);
    expect(keyFull.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(keyFull.body)).toMatchObject({ error: 'rate_limited', message: expect.stringMatching(/key/) });
    await stillServing('key');

    // One address, two keys: the address's cap.
    for (const key of [two, two, two, three, three]) {
      expect((await openStream(key, '127.0.0.6')).status).toBe(200);
    }
    const addressFull = await openStream(three, '127.0.0.6');
    expect(addressFull.status).toBe(429);
    expect(addressFull.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(addressFull.body).message).toMatch(/address/);
    await stillServing('address');

    // Eight open: the process is full for any key and address.
    const processFull = await openStream(ADMIN_KEY, '127.0.0.7');
    expect(processFull.status).toBe(503);
    expect(processFull.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(processFull.body)).toMatchObject({ error: 'unavailable' });
    await stillServing('process');

    // A stream that closes gives its place back to its key, its address and the process.
    streams[0]!.close();
    const again = await retryUntil(
      () => openStream(one, '127.0.0.5'),
      (s) => s.status === 200,
    );
    expect(again.status).toBe(200);
  });

  it('closes an address its fifth connection still sending headers, and takes one again once a request is in', async () => {
    const held: Array<{ socket: Socket; closed: Promise<void> }> = [];
    for (let i = 0; i < 4; i += 1) held.push(await halfSentHeaders('127.0.0.8'));
    // They count once they have been waiting for their headers past the slow mark.
    await new Promise((r) => setTimeout(r, SLOW_PENDING_MS + 200));
    const fifth = await halfSentHeaders('127.0.0.8');
    // Closed at once, not by the headers timeout (20 s here).
    const closedAtOnce = await Promise.race([
      fifth.closed.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 2_000)),
    ]);
    expect(closedAtOnce).toBe(true);
    // Another address, and the probes, are not held back.
    const other = await halfSentHeaders('127.0.0.9');
    await stillServing('pending');
    expect(other.socket.destroyed).toBe(false);

    // A request whose headers are in leaves the count, though its connection stays open.
    const answered = new Promise<string>((resolve) =>
      held[0]!.socket.once('data', (d: Buffer) => resolve(d.toString())),
    );
    held[0]!.socket.write('\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200/);
    const sixth = await halfSentHeaders('127.0.0.8');
    const stillOpen = await Promise.race([
      sixth.closed.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), 500)),
    ]);
    expect(stillOpen).toBe(true);
  });

  it('answers a burst of quick connections from one address, five times the pending cap', async () => {
    for (const s of streams) s.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
    // Twenty connections opened at once from one address (cap 4, process cap 24): none is
    // slow, so none is closed.
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<number>((resolve, reject) => {
            const req = request(
              { host: '127.0.0.1', port, path: '/healthz', localAddress: '127.0.0.10', agent: false },
              (res) => {
                res.resume();
                res.on('end', () => resolve(res.statusCode ?? 0));
              },
            );
            req.on('error', reject);
            req.end();
          }),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 20 }, () => 200));
  });
});
