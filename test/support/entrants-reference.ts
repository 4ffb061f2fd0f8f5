import type { RefEvent } from './reference.js';

const byTimeThenKey = (x: RefEvent, y: RefEvent) =>
  x.atMs - y.atMs || Buffer.compare(Buffer.from(x.key), Buffer.from(y.key));

/**
 * Entrants, modelled for the tests only: batches are applied in order; within a
 * batch, members not yet in enter in the order of their first event by (occurredAt, key),
 * while places are left. Returns the entrants in the order they entered.
 */
export function referenceEntrants(
  batches: ReadonlyArray<readonly RefEvent[]>,
  maxMembers: number,
  already: readonly string[] = [],
): { entrants: string[] } {
  const entrants = [...already];
  for (const batch of batches) {
    const firsts = new Map<string, RefEvent>();
    for (const e of [...batch].sort(byTimeThenKey)) if (!firsts.has(e.member)) firsts.set(e.member, e);
    for (const member of firsts.keys()) {
      if (!entrants.includes(member) && entrants.length < maxMembers) entrants.push(member);
    }
  }
  return { entrants };
}
