import { UnrecoverableError } from 'bullmq';
import { InvalidInput } from '../domain/errors.js';

/**
 * The error BullMQ is given for what a job's work threw. Input Laurel refuses (InvalidInput:
 * text Postgres cannot store, a payload contradicting its record) never passes however often
 * it is retried, so the job fails for good; anything else is retried.
 */
export function asJobError(err: unknown): unknown {
  return err instanceof InvalidInput ? new UnrecoverableError(`job refused: ${err.message}`) : err;
}
