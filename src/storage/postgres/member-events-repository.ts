import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * A member's events, newest `occurredAt` first: the ledger's (applied, voided) and the
 * rejections, merged. The order is total, (occurredAt, idempotency key, kind, id) all
 * descending (a key may be in both tables: a conflict's rejection beside the applied
 * event), so a keyset cursor on it pages stably while events arrive. Each side is a
 * range on its member-time index read up to `limit` rows; the merge keeps the first `limit`.
 */

export interface MemberEventsPosition {
  /** occurred_at in microseconds since the epoch: exact, unlike a JavaScript Date. */
  atMicros: string;
  key: string;
  /** 1 rejection, 0 ledger: rejections come first among rows of the same time and key. */
  kind: 0 | 1;
  id: string;
}

export interface MemberEventRow {
  kind: 0 | 1;
  id: string;
  at_micros: string;
  idempotency_key: string;
  board_id: string;
  period_key: string | null;
  status: 'applied' | 'voided' | 'rejected';
  reason: string | null;
  /** Scaled for the ledger (unscale with `decimals`), as posted for a rejection. */
  scaled: string | null;
  posted_value: unknown;
  decimals: number;
  occurred_at: Date;
  received_at: Date;
  source: string | null;
  metadata: unknown;
}

export async function memberEvents(
  db: Db,
  member: string,
  filter: { board?: string; period?: string },
  after: MemberEventsPosition | null,
  limit: number,
): Promise<MemberEventRow[]> {
  const micros = (column: string) => sql.raw(`(extract(epoch FROM ${column}) * 1000000)::bigint`);
  const fromMicros = (us: string) => sql`(timestamptz 'epoch' + ${us}::bigint * interval '1 microsecond')`;
  const scoped = (alias: string) => {
    const t = sql.raw(alias);
    return sql`${filter.board === undefined ? sql`` : sql`AND ${t}.board_id = ${filter.board}`}
      ${filter.period === undefined ? sql`` : sql`AND ${t}.period_key = ${filter.period}`}`;
  };
  // Rows after the cursor in the order above, for one side of kind `kind`: the `<=` on the
  // indexed pair bounds the index range, the rest settles rows of the cursor's own time and key.
  const beyond = (
    at: ReturnType<typeof sql.raw>,
    key: ReturnType<typeof sql.raw>,
    id: ReturnType<typeof sql.raw>,
    kind: 0 | 1,
  ) => {
    if (!after) return sql``;
    const cursorAt = fromMicros(after.atMicros);
    return sql`AND (${at}, ${key}) <= (${cursorAt}, ${after.key})
      AND ((${at}, ${key}) < (${cursorAt}, ${after.key}) OR ${kind}::int < ${after.kind}::int OR (${kind}::int = ${after.kind}::int AND ${id} < ${after.id}::bigint))`;
  };
  const rejectedAt = sql.raw('coalesce(r.occurred_at, r.received_at)');
  const { rows } = await sql<MemberEventRow>`
    SELECT t.*, b.decimals FROM (
      (SELECT 0 AS kind, e.id::text AS id, ${micros('e.occurred_at')}::text AS at_micros, e.idempotency_key, e.board_id, e.period_key,
              e.status, e.void_reason AS reason, e.value::text AS scaled, NULL::jsonb AS posted_value,
              e.occurred_at, e.received_at, e.source, e.metadata
         FROM score_events e
        WHERE e.member_id = ${member} ${scoped('e')} ${beyond(sql.raw('e.occurred_at'), sql.raw('e.idempotency_key'), sql.raw('e.id'), 0)}
        ORDER BY e.occurred_at DESC, e.idempotency_key DESC, e.id DESC
        LIMIT ${limit})
      UNION ALL
      (SELECT 1, r.id::text, ${micros('coalesce(r.occurred_at, r.received_at)')}::text, r.idempotency_key, r.board_id, r.period_key,
              'rejected', r.reason, NULL, r.payload->'value',
              ${rejectedAt}, r.received_at, r.source, r.payload->'metadata'
         FROM rejections r
        WHERE r.member_id = ${member} ${scoped('r')} ${beyond(rejectedAt, sql.raw('r.idempotency_key'), sql.raw('r.id'), 1)}
        ORDER BY ${rejectedAt} DESC, r.idempotency_key DESC, r.id DESC
        LIMIT ${limit})
    ) t JOIN boards b ON b.id = t.board_id
    ORDER BY t.occurred_at DESC, t.idempotency_key DESC, t.kind DESC, t.id::bigint DESC
    LIMIT ${limit}`.execute(db);
  return rows;
}
