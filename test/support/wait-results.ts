import { expect } from 'vitest';
import type { Harness } from './harness.js';

export interface WaitResult {
  idempotencyKey: string;
  status: string;
  reason?: string;
  period: string;
  score: number | null;
  rank: number | null;
}

/** Posts a batch with `?wait=true` and returns the per-event results (the batch must be applied within the wait). */
export async function postAndWait(h: Harness, events: object[]): Promise<WaitResult[]> {
  const res = await h.api('POST', '/v1/events?wait=true', { events });
  expect(res.status).toBe(200);
  return res.body.results as WaitResult[];
}
