import type { FaultHooks } from '../context.js';
import type { Logger } from '../logger.js';

/**
 * Fault injection for the chaos suite, switched on from the environment of a real process.
 * `LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS` holds every score batch between its Postgres commit
 * and its Redis projection (the window where a crash is most dangerous) and logs that it
 * did, so a test can SIGKILL the worker exactly there. Never set in production.
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
  return hooks;
}
