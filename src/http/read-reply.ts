import type { Response } from 'express';
import { setReadHeaders, type CorsOrigins } from './answer-headers.js';

/**
 * Sends a read route's answer with its read headers: reusable for a day once its period is
 * closed (`final`), for a few seconds otherwise.
 */
export function replyRead(res: Response, origins: CorsOrigins, body: unknown, final = false): void {
  setReadHeaders(res, final ? 'final' : 'live', origins);
  res.json(body);
}

/** True for an answer about a closed period: it can no longer change. */
export const aboutClosedPeriod = (body: { period: { state: string } }): boolean => body.period.state === 'closed';
