import type { BackoffStrategy } from 'bullmq';

export const MAX_BACKOFF_MS = 30_000;

/**
 * Exponential backoff capped at 30 s, with jitter so that jobs failed by the same outage
 * do not all come back in the same instant. A dependency that is down for hours therefore
 * costs a retry every 30 s per job, never a lost job.
 */
export const cappedExponentialBackoff: BackoffStrategy = (attemptsMade) => {
  const base = Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.max(0, attemptsMade - 1));
  return Math.round(base / 2 + Math.random() * (base / 2));
};
