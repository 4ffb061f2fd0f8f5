import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream } from '../../src/http/event-stream.js';

/**
 * What a stream does with a client that never reads: once the kernel's buffers on both sides
 * are full, what Node buffers for it grows by each message until it passes 256 KB, and the
 * stream is cut off then; the process goes on answering everyone else. Real sockets on
 * loopback, a message of 16 KB written as fast as the stream takes them.
 */

const MESSAGE = 'x'.repeat(16 * 1024);
const CAP = 256 * 1024;

let server: Server;
let port: number;
const sockets: Socket[] = [];
let outcome: Promise<{ closed: boolean; messages: number; maxBuffered: number }>;

beforeAll(async () => {
  let resolveOutcome!: (v: { closed: boolean; messages: number; maxBuffered: number }) => void;
  outcome = new Promise((resolve) => (resolveOutcome = resolve));
  server = createServer((req, res) => {
    if (req.url !== '/stream') return void res.end('ok');
    let closed = false;
    const sink = openEventStream(req, res, () => (closed = true));
    let messages = 0;
    let maxBuffered = 0;
    const push = (): void => {
      if (closed || (res as ServerResponse).destroyed || messages > 100_000)
        return resolveOutcome({ closed, messages, maxBuffered });
      sink.send('top', MESSAGE);
      messages += 1;
      maxBuffered = Math.max(maxBuffered, res.writableLength);
      setImmediate(push);
    };
    push();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('an event stream whose client never reads', () => {
  it('is cut off once 256 KB are buffered for it, and the process keeps answering', async () => {
    const reader = connect(port, '127.0.0.1');
    sockets.push(reader);
    await new Promise<void>((resolve) => reader.once('connect', resolve));
    reader.write('GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n');
    // Never reads: nothing is taken off the receive buffer.
    reader.pause();

    const { closed, messages, maxBuffered } = await outcome;
    expect(closed).toBe(true);
    // Cut off at the cap: at most one message beyond it was ever held for the client.
    expect(maxBuffered).toBeGreaterThan(CAP);
    expect(maxBuffered).toBeLessThanOrEqual(CAP + MESSAGE.length + 64);
    // The kernel took a share first: more was written than Node ever held.
    expect(messages * MESSAGE.length).toBeGreaterThan(maxBuffered);

    const other = await fetch(`http://127.0.0.1:${port}/other`);
    expect(await other.text()).toBe('ok');
  });
});
