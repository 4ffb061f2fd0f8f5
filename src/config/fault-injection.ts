import type { FaultHooks } from '../context.js';
import type { Logger } from '../logger.js';

/**
 * Fault injection for the chaos suite, switched on from the environment of a real process.
 * `LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS` holds every score batch between its Postgres commit
 * and its Redis projection (the window where a crash is most dangerous) and logs that it
 * did, so a test can SIGKILL the worker exactly there; `LAUREL_FAULT_PAUSE_MID_CLOSE_MS` holds a
 * period's close between its `closing` transition and the transaction that finishes it.
 * Never set in production.
 */
export function faultHooksFromEnvironment(source: NodeJS.ProcessEnv, log: Logger): FaultHooks {
  const hooks: FaultHooks = {};
  const pauseMs = Number(source.LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS ?? 0);
  if (Number.isFinite(pauseMs) && pauseMs > 0) {
    log.warn({ pauseMs }, 'fault injection on: score batches pause after their Postgres commit');
    hooks.afterCommit = async (jobId) => {
      log.warn({ jobId, fault: 'paused-after-commit' }, 'fault injection: batch committed, projection held back');
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    };
  }
  const closeMs = Number(source.LAUREL_FAULT_PAUSE_MID_CLOSE_MS ?? 0);
  if (Number.isFinite(closeMs) && closeMs > 0) {
    log.warn({ pauseMs: closeMs }, 'fault injection on: closes pause between closing and closed');
    hooks.midClose = async (board, period) => {
      log.warn({ board, period, fault: 'paused-mid-close' }, 'fault injection: period closing, close held back');
      await new Promise((resolve) => setTimeout(resolve, closeMs));
    };
  }
  return hooks;
}
