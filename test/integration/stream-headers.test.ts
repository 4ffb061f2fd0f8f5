import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';

/** Headers that differ by the nature of an answer (a JSON body or an open stream), not by route. */
const PER_ANSWER = new Set([
  'content-type',
  'content-length',
  'cache-control',
  'date',
  'etag',
  'x-request-id',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'x-accel-buffering',
]);

describe('event stream answers', () => {
  let h: Harness;
  const origin = 'https://game.example';
  beforeAll(async () => {
    h = await createHarness({ workers: false, env: { CORS_ORIGINS: origin } });
    expect((await h.api('PUT', '/v1/boards/hdr', { aggregation: 'sum', period: 'all' })).status).toBe(201);
  });
  afterAll(() => h.close());

  /** The headers of an answer, those that belong to the answer's kind left out; the body is not waited for. */
  async function headersOf(path: string): Promise<{ status: number; headers: Record<string, string> }> {
    const abort = new AbortController();
    const res = await fetch(`${h.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}`, origin, 'accept-encoding': 'gzip' },
      signal: abort.signal,
    });
    const headers = Object.fromEntries([...res.headers].filter(([name]) => !PER_ANSWER.has(name)));
    abort.abort();
    return { status: res.status, headers };
  }

  it('carry the same headers as the read they stream, and so do their errors', async () => {
    const read = await headersOf('/v1/boards/hdr/standings');
    const stream = await headersOf('/v1/boards/hdr/standings/stream');
    expect([read.status, stream.status]).toEqual([200, 200]);
    expect(stream.headers).toEqual(read.headers);
    expect(read.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(read.headers['vary']).toMatch(/Authorization/);

    const member = await headersOf('/v1/boards/hdr/standings/nobody');
    const memberStream = await headersOf('/v1/boards/hdr/standings/nobody/stream');
    expect(memberStream.headers).toEqual(member.headers);

    const missing = await headersOf('/v1/boards/none/standings');
    const missingStream = await headersOf('/v1/boards/none/standings/stream');
    expect([missing.status, missingStream.status]).toEqual([404, 404]);
    expect(missingStream.headers).toEqual(missing.headers);
  });
});
