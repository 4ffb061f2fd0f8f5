import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamSink } from '../services/realtime/stream-hub.js';

/** A client this far behind (bytes buffered and unsent) is cut off rather than buffered for. */
const MAX_BUFFERED_BYTES = 256 * 1024;

/**
 * Turns a response into a Server-Sent Events stream: headers sent at once, `retry` so
 * clients reconnect within a second, no buffering by proxies, and `onClose` when the
 * client goes away.
 */
export function openEventStream(req: IncomingMessage, res: ServerResponse, onClose: () => void): StreamSink {
  res.statusCode = 200;
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
  req.socket.setNoDelay(true);
  res.write('retry: 1000\n\n');
  res.once('close', onClose);
  return new ResponseSink(res);
}

/** One object per stream and its methods shared, rather than a set of closures per stream. */
class ResponseSink implements StreamSink {
  constructor(private readonly res: ServerResponse) {}

  send(event: string, data: string): void {
    this.write(`event: ${event}\ndata: ${data}\n\n`);
  }

  keepalive(): void {
    this.write(': keepalive\n\n');
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  private write(text: string): void {
    const { res } = this;
    if (res.writableEnded || res.destroyed) return;
    if (res.writableLength > MAX_BUFFERED_BYTES) return void res.destroy();
    res.write(text);
  }
}
