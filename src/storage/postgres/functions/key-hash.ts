import { sql, type RawBuilder } from 'kysely';

/**
 * The form in which score_event_keys holds every idempotency key: `sha256:<hex>`, as SQL text
 * over a text expression. The plain key stays only in the ledger (score_events), so erasing a
 * member (docs/api.md, Erasure) leaves their keys claimed, as hashes, without rewriting them, and
 * laurel_apply_batch finds any posted key with one probe.
 */
export const hashedKeySql = (expr: string): string => `'sha256:' || encode(sha256(convert_to(${expr}, 'UTF8')), 'hex')`;

const [before, after] = hashedKeySql('\u0000').split('\u0000') as [string, string];
/** The same form of a key passed as a query parameter. */
export const hashedKey = (key: string): RawBuilder<string> =>
  sql<string>`${sql.raw(before)}${key}::text${sql.raw(after)}`;
