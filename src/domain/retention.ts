/**
 * A closed period is retired once it has been closed for the cache retention: from then
 * on Redis holds nothing of it (the period tick removes its keys) and every read of it is
 * answered from its final results. Decided by time alone, so every process switches a
 * period over at the same moment whether or not the keys are gone yet.
 */
export function isRetired(period: { state: string; closedAt: Date | null }, now: Date, cacheHours: number): boolean {
  return (
    period.state === 'closed' &&
    period.closedAt !== null &&
    period.closedAt.getTime() + cacheHours * 3_600_000 <= now.getTime()
  );
}

/** Periods closed at or before this instant are retired. */
export function retiredBefore(now: Date, cacheHours: number): Date {
  return new Date(now.getTime() - cacheHours * 3_600_000);
}
