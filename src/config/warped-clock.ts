/**
 * The process's own time, as the environment may bend it (never in production):
 * - `LAUREL_CLOCK_SPEED` (the soak, `npm run soak`): time runs faster than real time; with
 *   480 a day period lasts three real minutes, so periods close, retire and leave Redis while
 *   the load runs. `LAUREL_CLOCK_EPOCH` (an ISO instant, the moment the warped time starts
 *   from) is the same for every process of a run; `LAUREL_CLOCK_START` (optional) is the
 *   warped time at that moment, so a run can begin just before a period ends.
 * - `LAUREL_CLOCK_OFFSET_MS` (the chaos suite): the host's clock is off by this much, which
 *   the shared clock measures against Postgres' and corrects.
 * `localMs` is the host clock as the process reads it; `toTime` maps corrected real time to
 * the time Laurel works in (the warp, or none).
 */
export interface LocalTime {
  localMs: () => number;
  toTime: (realMs: number) => Date;
  /** Whether LAUREL_CLOCK_SPEED warps time (logged at start). */
  warped: boolean;
}

export function localTimeFromEnvironment(source: NodeJS.ProcessEnv): LocalTime {
  const offset = Number(source.LAUREL_CLOCK_OFFSET_MS ?? 0);
  const localMs = Number.isFinite(offset) && offset !== 0 ? () => Date.now() + offset : Date.now;
  const speed = Number(source.LAUREL_CLOCK_SPEED ?? 1);
  const epoch = Date.parse(source.LAUREL_CLOCK_EPOCH ?? '');
  if (!Number.isFinite(speed) || speed === 1 || !Number.isFinite(epoch))
    return { localMs, toTime: (ms) => new Date(ms), warped: false };
  const start = Date.parse(source.LAUREL_CLOCK_START ?? '');
  const from = Number.isFinite(start) ? start : epoch;
  return { localMs, toTime: (ms) => new Date(from + (ms - epoch) * speed), warped: true };
}
