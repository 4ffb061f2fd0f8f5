/** Time is injected so tests can drive it; production uses the shared clock (src/services/shared-clock.ts). */
export interface Clock {
  now(): Date;
  /**
   * The process's own clock minus the shared one (Postgres'), in ms, as last measured;
   * undefined where nothing is measured (tests' clocks, the plain system clock).
   */
  skewMs?(): number | undefined;
}

export const systemClock: Clock = { now: () => new Date() };
