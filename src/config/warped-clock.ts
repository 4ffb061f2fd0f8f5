import { systemClock, type Clock } from '../clock.js';

/**
 * A clock that runs faster than real time, for the soak (`npm run soak`): with
 * `LAUREL_CLOCK_SPEED=480` a day period lasts three real minutes, so periods close, retire
 * and leave Redis while the load runs. `LAUREL_CLOCK_EPOCH` (an ISO instant, the moment the
 * warped time starts from) is the same for every process of a run, so web and worker agree
 * on the time; `LAUREL_CLOCK_START` (optional) is the warped time at that moment, so a run
 * can begin just before a period ends. Unset, the system clock. Never set in production.
 */
export function clockFromEnvironment(source: NodeJS.ProcessEnv): Clock {
  const speed = Number(source.LAUREL_CLOCK_SPEED ?? 1);
  const epoch = Date.parse(source.LAUREL_CLOCK_EPOCH ?? '');
  if (!Number.isFinite(speed) || speed === 1 || !Number.isFinite(epoch)) return systemClock;
  const start = Date.parse(source.LAUREL_CLOCK_START ?? '');
  const from = Number.isFinite(start) ? start : epoch;
  return { now: () => new Date(from + (Date.now() - epoch) * speed) };
}
