import { MEMBER_ID } from '../domain/ids.js';
import { InvalidInput } from '../domain/errors.js';

/** A member id from a path: one that cannot exist is refused before any query. */
export function assertMemberId(memberId: string): void {
  if (!MEMBER_ID.test(memberId)) {
    throw new InvalidInput('invalid member id', [
      { path: 'memberId', message: 'must match ^[A-Za-z0-9_.:@-]{1,128}$' },
    ]);
  }
}
