import type { IncomingMessage, ServerResponse } from 'node:http';
import fresh from 'fresh';

/** Express' ETag generator (`app.get('etag fn')`), taken from the app so both paths tag alike. */
export type EtagOf = (body: Buffer, encoding?: BufferEncoding) => string | undefined;

/**
 * A JSON answer on node's response, exactly as Express' `res.status(s).json(body)` sends
 * it (same headers, in the same order, same ETag and 304 on a matching If-None-Match, no
 * body for HEAD), so that a route answered in front of Express (`door.ts`) cannot be told
 * apart from one answered by it.
 */
export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, etagOf: EtagOf): void {
  res.statusCode = status;
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const chunk = Buffer.from(JSON.stringify(body), 'utf8');
  res.setHeader('Content-Length', String(chunk.length));
  const etag = res.hasHeader('ETag') ? undefined : etagOf(chunk);
  if (etag) res.setHeader('ETag', etag);
  if (isFresh(req, res)) {
    res.statusCode = 304;
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.removeHeader('Transfer-Encoding');
    return void res.end();
  }
  if (req.method === 'HEAD') return void res.end();
  res.end(chunk);
}

/** Express' `req.fresh`: a conditional GET or HEAD whose validators still match a 2xx answer. */
function isFresh(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const status = res.statusCode;
  if ((status < 200 || status >= 300) && status !== 304) return false;
  return fresh(req.headers, { etag: res.getHeader('ETag'), 'last-modified': res.getHeader('Last-Modified') });
}
