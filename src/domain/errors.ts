/**
 * Laurel's own errors. Services and storage throw these; only src/http maps them to statuses
 * and the API's error shape, and the CLI prints the same message and details.
 */

/** One field at fault: `path` names it (dotted), `index` the event of a batch. */
export interface ErrorDetail {
  index?: number;
  path: string;
  message: string;
}

export abstract class LaurelError extends Error {
  constructor(
    message: string,
    readonly details?: ErrorDetail[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** What was asked for does not exist (or cannot, like an id of the wrong shape). */
export class NotFound extends LaurelError {}

/** The request is valid but contradicts the current state (a closed period, a changed definition). */
export class Conflict extends LaurelError {
  /** The API's error code: `conflict`, or a named state such as `board_full`. */
  readonly code: string;
  constructor(message: string, details?: ErrorDetail[], options: { cause?: unknown; code?: string } = {}) {
    super(message, details, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? 'conflict';
  }
}

/** The input is malformed; `details` name every field at fault. */
export class InvalidInput extends LaurelError {
  declare readonly details: ErrorDetail[];
  /** `invalid_text` for text Postgres cannot store; `validation_failed` otherwise. */
  readonly code: 'validation_failed' | 'invalid_text';
  constructor(
    message: string,
    details: ErrorDetail[],
    code: 'validation_failed' | 'invalid_text' = 'validation_failed',
  ) {
    super(message, details);
    this.code = code;
  }
}

/** The parts Laurel depends on, as logs, readiness and Unavailable name them. */
export type Dependency = 'postgres' | 'queue-redis' | 'leaderboard-redis';

/** A dependency (Postgres, Redis) is unreachable or full: nothing was done, and a retry may work. */
export class Unavailable extends LaurelError {
  /** When a retry makes sense (HTTP Retry-After). */
  readonly retryAfterSeconds: number;
  /** Which dependency failed, when known: logs are rate-limited per dependency. */
  readonly dependency: Dependency | undefined;
  constructor(
    message: string,
    details?: ErrorDetail[],
    options: { cause?: unknown; retryAfterSeconds?: number; dependency?: Dependency } = {},
  ) {
    super(message, details, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
    this.dependency = options.dependency;
  }
}

/**
 * Postgres gave up on a statement that lost a race for time or locks (a statement or lock
 * timeout, a deadlock): nothing of it was done, and the same work may pass when retried.
 */
export class Contention extends Unavailable {}

/** Redis refused a write because it reached maxmemory (`noeviction`): nothing of it was written. */
export class OutOfMemory extends Unavailable {}

/** A feature this deployment has not been given the settings for: no retry helps until it is. */
export class NotConfigured extends LaurelError {}
