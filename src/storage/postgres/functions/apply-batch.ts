import { mergeAggregates, rankedEvents, scopesOf, winnerColumns } from './aggregate-rules.js';
import { hashedKeySql } from './key-hash.js';
import { entrantCountSql, entrantsLockSql } from './entrant-rules.js';
import { placeMembersSql, placementWaitsSql } from './league-rules.js';
import type { StoredFunction } from './stored-function.js';

/**
 * laurel_apply_batch applies one intake batch in one round trip and one transaction:
 * classify each event (duplicate, conflict, refused by the worker's routing, closed period, fresh), refuse sums (of values or subscores) that would
 * leave ±2^40, enter newcomers of maxMembers boards (refusing board_full), insert the fresh
 * events, place league members, fold them into the member aggregates (bumping each
 * aggregate's version), record rejections, and return the resulting aggregates for the
 * Redis projection. Called by storage/postgres/events-repository.ts (applyBatch).
 *
 * Why it is shaped as it is (each point measured with bench/apply-cost.ts):
 * - The events are parsed from jsonb once, into an array of laurel_apply_event. Each pass
 *   reads them with unnest and writes only a parallel array of verdicts (then of outcomes).
 * - No statement joins two of its own intermediate results: a repeated key finds its first
 *   copy with a window, and the range check adds each sum to its current row with GROUP BY.
 *   Estimated at a few rows, such joins were planned as nested loops; the range check's
 *   compared every pair, a quadratic cost once the batch's members all had aggregate rows.
 * - The key table holds keys hashed only (functions/key-hash.ts), erased members' as any
 *   other, beside their board (an event is (board, key)): each key is hashed once, in the
 *   first pass (v_key_hash, parallel to v_ev), and found with one probe of (hash, board).
 * - Keys this batch claimed are looked up in the claimed-keys object (a binary search), not
 *   in a jsonb array of inserted keys (a linear one), and the key table is read again only
 *   for events this batch did not store itself.
 * - When copies of one key in a batch are rejected with the same reason and payload hash, the
 *   rejection row kept (unique on those three) is the first copy's.
 *
 * Signature (jsonb, jsonb, timestamptz) -> jsonb: workers of the previous release call it
 * during a rolling deploy. Read "Stored functions" in docs/design/ledger.md before changing it.
 */

/** Columns of laurel_apply_event (migrations/...-0001-baseline.ts), in its order. */
const EVENT_COLUMNS = `ord, key, board_id, period_key, starts_at, ends_at, member_id, category, value, occurred_at,
  received_at, source, payload_hash, metadata, payload, pre_reason, subscore`;
/** The batch's events beside their verdicts, i being the position in the batch. */
const classified = (alias: string) =>
  `unnest(v_ev, v_verdict) WITH ORDINALITY AS ${alias}(${EVENT_COLUMNS}, verdict, i)`;
/** The same beside their keys' hashed forms h (the form score_event_keys holds). */
const hashed = (alias: string) =>
  `unnest(v_ev, v_verdict, v_key_hash) WITH ORDINALITY AS ${alias}(${EVENT_COLUMNS}, verdict, h, i)`;
/**
 * An event's identity, `(board, idempotencyKey)`, as one text: board ids never hold '|'.
 * The key objects (claimed, exhausted) are keyed by it.
 */
const identity = (alias: string, key = 'key') => `(${alias}.board_id || '|' || ${alias}.${key})`;
/** The batch's events beside their outcomes. */
const decided = (alias: string) =>
  `unnest(v_ev, v_out) AS ${alias}(${EVENT_COLUMNS}, outcome, stored_board, stored_period, stored_member, stored_category)`;

export const applyBatch: StoredFunction = {
  name: 'laurel_apply_batch',
  definition: `
CREATE OR REPLACE FUNCTION laurel_apply_batch(p_events jsonb, p_boards jsonb, p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
-- Every lookup here is by key for at most a batch of rows. Planner statistics of a young or
-- fast-growing table can make a full scan look cheap, and a scan per batch would make apply
-- time grow with the ledger; keys are always indexed, so never scan.
SET enable_seqscan = off
-- Every statement's parameters (the batch's arrays) differ on every call, so custom plans
-- (plpgsql's default) re-planned them all per call: most of a small call's cost. A generic
-- plan is made once per session and again when a table's statistics change; with scans off
-- and no join of two intermediate results (see the header), the batch's size, which it
-- does not know, would not change it.
SET plan_cache_mode = force_generic_plan
AS $fn$
DECLARE
  v_stale jsonb;
  -- The events as posted, in batch order; v_verdict and v_out run parallel to it.
  v_ev laurel_apply_event[];
  -- Null for an event of a board that does not exist: such an event has no outcome.
  v_verdict text[];
  -- Each key in the form the key table holds it.
  v_key_hash text[];
  v_out laurel_apply_outcome[];
  v_overflow text[];
  v_created jsonb;
  v_claimed jsonb;
  v_inserted bigint;
  v_aggregates jsonb;
  -- Attempts (boards with max_attempts): keys of this batch beyond the member's first n, and
  -- stored events pushed out of the first n by earlier ones of this batch.
  v_lock bigint;
  v_capped boolean;
  v_exhausted jsonb := '{}'::jsonb;
  v_displaced jsonb := '[]'::jsonb;
  -- maxMembers: 'board|period|member' of members this batch cannot enter.
  v_full jsonb := '{}'::jsonb;
BEGIN
  -- Routing (period, scale) was computed from a board revision: lock the boards so it
  -- cannot change under the batch, and ask for a redo if it already has.
  PERFORM 1 FROM boards b
   WHERE b.id IN (SELECT x.id FROM jsonb_to_recordset(p_boards) AS x(id text))
   ORDER BY b.id
     FOR SHARE;
  SELECT coalesce(jsonb_agg(x.id), '[]'::jsonb) INTO v_stale
    FROM jsonb_to_recordset(p_boards) AS x(id text, revision int)
    LEFT JOIN boards b ON b.id = x.id
   WHERE b.id IS NULL OR b.revision <> x.revision;
  IF jsonb_array_length(v_stale) > 0 THEN
    RETURN jsonb_build_object('stale', v_stale);
  END IF;

  v_ev := ARRAY(SELECT e FROM jsonb_populate_recordset(NULL::laurel_apply_event, p_events) AS e);

  -- Classification, first pass: an event's identity is (board, key). One repeated inside the
  -- batch is decided by its first copy (see the final pass); one already in the key table is
  -- a duplicate or a conflict; what is left is a candidate, pending its period.
  WITH ev AS (
    SELECT e.*, e.ordinality AS i, min(e.ord) OVER (PARTITION BY e.board_id, e.key) AS first_ord, ${hashedKeySql('e.key')} AS h
      FROM unnest(v_ev) WITH ORDINALITY AS e
  )
  SELECT array_agg(
           CASE
             WHEN b.id IS NULL THEN NULL
             WHEN ev.first_ord <> ev.ord THEN 'repeat'
             WHEN se.payload_hash IS NOT NULL
               THEN CASE WHEN se.payload_hash = ev.payload_hash THEN 'duplicate' ELSE 'conflict' END
             WHEN ev.pre_reason IS NOT NULL THEN ev.pre_reason
             WHEN ev.ends_at IS NOT NULL AND ev.received_at > ev.ends_at + make_interval(secs => b.grace_seconds) THEN 'period_closed'
             ELSE 'candidate'
           END ORDER BY ev.i),
         array_agg(ev.h ORDER BY ev.i) INTO v_verdict, v_key_hash
    FROM ev
    LEFT JOIN boards b ON b.id = ev.board_id
    -- One probe of the key's index per event. As a plain join, knowing the batch's size,
    -- the planner merged the whole index with the sorted batch (hashes spread over all of it).
    LEFT JOIN LATERAL (SELECT k.payload_hash FROM score_event_keys k
                        WHERE k.idempotency_key = ev.h AND k.board_id = ev.board_id) se ON true;

  -- A member is created only by an event that stores something under their id: one that may
  -- enter the ledger, or a rejection. A duplicate (a repeat of one too: same payload, same
  -- member) or an event of a board that does not exist creates none, so resending an erased
  -- member's event does not bring the member back. (The first pass locks nothing.)
  INSERT INTO members (id)
  SELECT DISTINCT c.member_id
    FROM (SELECT c.member_id, c.verdict, c.payload_hash,
                 first_value(c.payload_hash) OVER (PARTITION BY c.board_id, c.key ORDER BY c.ord) AS first_hash
            FROM ${classified('c')}) c
   WHERE c.verdict <> 'duplicate' AND (c.verdict <> 'repeat' OR c.payload_hash <> c.first_hash)
   ORDER BY 1
  ON CONFLICT DO NOTHING;
  -- Region changes, exclusions and voids lock the member FOR UPDATE: they wait for this
  -- batch and it for them, so no batch projects a region or exclusion flag that is stale.
  PERFORM 1 FROM members m
   WHERE m.id IN (SELECT e.member_id FROM unnest(v_ev) AS e)
   ORDER BY m.id
     FOR SHARE;

  -- A period is created only by an event that can still count in it: never by a late,
  -- duplicate or refused one. The caller learns which periods it created: Redis holds all
  -- of such a period by construction.
  WITH created AS (
    INSERT INTO periods (board_id, key, starts_at, ends_at, state)
    SELECT DISTINCT c.board_id, c.period_key, c.starts_at, c.ends_at, 'open'
      FROM ${classified('c')}
     WHERE c.verdict = 'candidate'
     ORDER BY 1, 2
    ON CONFLICT DO NOTHING
    RETURNING board_id, key
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('board', c.board_id, 'period', c.key)), '[]'::jsonb) INTO v_created FROM created c;

  -- Closing takes these rows FOR UPDATE, so it waits for batches in flight and they for it.
  PERFORM 1 FROM periods p
   WHERE (p.board_id, p.key) IN (
           SELECT c.board_id, c.period_key FROM ${classified('c')}
            WHERE c.verdict = 'candidate')
   ORDER BY p.board_id, p.key
     FOR SHARE;

  -- Second pass: a candidate counts only in a period that is still open, and, in a period an
  -- operator closed now (its end moved to that moment), only if it occurred before that end.
  SELECT array_agg(
           CASE WHEN c.verdict IS DISTINCT FROM 'candidate' THEN c.verdict
                WHEN p.state = 'open' AND (p.close_requested_at IS NULL OR c.occurred_at < p.ends_at) THEN 'fresh'
                ELSE 'period_closed' END ORDER BY c.i)
    INTO v_verdict
    FROM ${classified('c')}
    LEFT JOIN periods p ON p.board_id = c.board_id AND p.key = c.period_key;

  -- Attempts are counted per (board, period, member) over the ledger, entrants per (board,
  -- period): one batch at a time per such key, so each sees every earlier batch's events and
  -- entries. Every batch takes these locks after its member and period locks and in one
  -- order, so none waits in a circle.
  FOR v_lock IN
    SELECT DISTINCT l.h
      FROM ${classified('c')}
      JOIN boards b ON b.id = c.board_id AND (b.max_attempts IS NOT NULL OR b.max_members IS NOT NULL OR b.league IS NOT NULL)
      CROSS JOIN LATERAL (VALUES
        (CASE WHEN b.max_attempts IS NOT NULL THEN hashtextextended(c.board_id || '|' || c.period_key || '|' || c.member_id, 0) END),
        (CASE WHEN b.max_members IS NOT NULL OR b.league IS NOT NULL THEN ${entrantsLockSql('c.board_id', 'c.period_key')} END)) AS l(h)
     WHERE c.verdict = 'fresh' AND l.h IS NOT NULL
     ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(v_lock);
  END LOOP;
  v_capped := FOUND;

  -- Sums: lock the member's current rows and refuse the batch's events of any member whose
  -- total would leave the exact range. (The CHECK on member_aggregates is the last guard.)
  WITH fresh AS (
    SELECT c.* FROM ${classified('c')}
     WHERE c.verdict = 'fresh'
  ),
  contrib AS (
    SELECT f.board_id, f.period_key, k.cat, f.member_id, sum(f.value) AS s, sum(coalesce(f.subscore, 0)) AS ss
      FROM fresh f
      JOIN boards b ON b.id = f.board_id AND b.aggregation = 'sum'
      ${scopesOf('f.category')}
     WHERE k.cat IS NOT NULL
     GROUP BY 1, 2, 3, 4
  ),
  cur AS (
    SELECT a.board_id, a.period_key, a.category, a.member_id, a.value, a.subscore
      FROM member_aggregates a
      JOIN contrib c ON a.board_id = c.board_id AND a.period_key = c.period_key
                    AND a.category = c.cat AND a.member_id = c.member_id
     ORDER BY 1, 2, 3, 4
       FOR UPDATE OF a
  )
  -- Each sum beside its current row, if any, added up by key: all of cur is read (so all
  -- of it locked), and the two are not joined (see the header).
  SELECT coalesce(array_agg(DISTINCT o.board_id || '|' || o.period_key || '|' || o.member_id), '{}') INTO v_overflow
    FROM (SELECT t.board_id, t.period_key, t.member_id
            FROM (SELECT c.board_id, c.period_key, c.cat, c.member_id, c.s AS v, c.ss AS sv FROM contrib c
                  UNION ALL
                  SELECT cur.board_id, cur.period_key, cur.category, cur.member_id, cur.value, cur.subscore FROM cur) t
           GROUP BY t.board_id, t.period_key, t.cat, t.member_id
          HAVING abs(sum(t.v)) > 1099511627776 OR abs(sum(t.sv)) > 1099511627776) o;

  IF cardinality(v_overflow) > 0 THEN
    SELECT array_agg(
             CASE WHEN c.verdict = 'fresh' AND c.board_id || '|' || c.period_key || '|' || c.member_id = ANY (v_overflow)
                  THEN 'out_of_range'
                  ELSE c.verdict END ORDER BY c.i)
      INTO v_verdict
      FROM ${classified('c')};
  END IF;

  -- maxMembers: a member not yet entered enters with their first counting event; within the
  -- batch newcomers take the free places in the order of their first events by
  -- (occurredAt, key). The events of a newcomer who finds no place are board_full.
  IF v_capped THEN
    WITH firsts AS (
      SELECT DISTINCT ON (c.board_id, c.period_key, c.member_id) c.board_id, c.period_key, c.member_id, c.occurred_at, c.key, b.max_members
        FROM ${classified('c')}
        JOIN boards b ON b.id = c.board_id AND b.max_members IS NOT NULL
       WHERE c.verdict = 'fresh'
       ORDER BY c.board_id, c.period_key, c.member_id, c.occurred_at, c.key COLLATE "C"
    ),
    newcomers AS (
      SELECT f.*, row_number() OVER (PARTITION BY f.board_id, f.period_key ORDER BY f.occurred_at, f.key COLLATE "C") AS r
        FROM firsts f
       WHERE NOT EXISTS (SELECT 1 FROM board_entrants e
                          WHERE e.board_id = f.board_id AND e.period_key = f.period_key AND e.member_id = f.member_id)
    ),
    entered AS (
      SELECT DISTINCT n.board_id, n.period_key, ${entrantCountSql('n.board_id', 'n.period_key')} AS n
        FROM newcomers n
    )
    SELECT coalesce(jsonb_object_agg(n.board_id || '|' || n.period_key || '|' || n.member_id, true), '{}'::jsonb) INTO v_full
      FROM newcomers n
      JOIN entered t ON t.board_id = n.board_id AND t.period_key = n.period_key
     WHERE t.n + n.r > n.max_members;
    IF v_full <> '{}'::jsonb THEN
      SELECT array_agg(
               CASE WHEN c.verdict = 'fresh' AND v_full ? (c.board_id || '|' || c.period_key || '|' || c.member_id)
                    THEN 'board_full'
                    ELSE c.verdict END ORDER BY c.i)
        INTO v_verdict
        FROM ${classified('c')};
    END IF;
  END IF;

  -- The key table is the one arbiter of idempotency, per board: a (board, key) is claimed
  -- here (a concurrent batch holding it makes this wait, then skip it), and only claimed
  -- events enter the ledger, whichever monthly partition their occurred_at routes them to.
  WITH claimed AS (
    INSERT INTO score_event_keys (idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at)
    SELECT c.h, c.payload_hash, c.board_id, c.period_key, c.member_id, c.category, c.occurred_at
      FROM ${hashed('c')}
     WHERE c.verdict = 'fresh'
     ORDER BY c.h COLLATE "C", c.board_id COLLATE "C"
    ON CONFLICT (idempotency_key, board_id) DO NOTHING
    RETURNING idempotency_key, board_id
  )
  -- Objects, not joins: their lookups stay logarithmic whatever the planner guesses of the
  -- sizes. The claimed hashes' object is a scalar subquery, so it is built once (beside the
  -- events, as a guessed one-row join, it was built again for each event).
  SELECT coalesce(jsonb_object_agg(${identity('c')}, true), '{}'::jsonb) INTO v_claimed
    FROM ${hashed('c')}
   WHERE c.verdict = 'fresh'
     AND (SELECT jsonb_object_agg(${identity('k', 'idempotency_key')}, true) FROM claimed k) ? ${identity('c', 'h')};

  -- Attempts: the member's events of the period, stored and claimed here, ranked by
  -- (occurredAt, key); the first max_attempts count. A claimed event beyond them is stored
  -- exhausted; a stored one beyond them (an earlier event arrived late) stops counting.
  -- Every event is kept, so the ledger ends the same whatever the arrival order.
  IF v_capped THEN
    WITH cand AS (
      SELECT c.key, c.board_id, c.period_key, c.member_id, c.occurred_at, c.starts_at, c.ends_at, b.max_attempts
        FROM ${classified('c')}
        JOIN boards b ON b.id = c.board_id AND b.max_attempts IS NOT NULL
       WHERE c.verdict = 'fresh' AND v_claimed ? ${identity('c')}
    ),
    grp AS (SELECT DISTINCT board_id, period_key, member_id, starts_at, ends_at, max_attempts FROM cand),
    pool AS (
      SELECT g.board_id, g.period_key, g.member_id, g.max_attempts, e.idempotency_key AS key, e.occurred_at, e.status, false AS new
        FROM grp g
        JOIN score_events e ON e.board_id = g.board_id AND e.period_key = g.period_key AND e.member_id = g.member_id
                           AND e.occurred_at >= g.starts_at AND e.occurred_at < coalesce(g.ends_at, 'infinity')
      UNION ALL
      SELECT c.board_id, c.period_key, c.member_id, c.max_attempts, c.key, c.occurred_at, NULL, true FROM cand c
    ),
    ranked AS (
      SELECT p.*, row_number() OVER (PARTITION BY p.board_id, p.period_key, p.member_id ORDER BY p.occurred_at, p.key COLLATE "C") AS rn
        FROM pool p
    )
    SELECT coalesce(jsonb_object_agg(${identity('r')}, true) FILTER (WHERE r.new AND r.rn > r.max_attempts), '{}'::jsonb),
           coalesce(jsonb_agg(jsonb_build_object('key', r.key, 'board', r.board_id, 'period', r.period_key, 'member', r.member_id, 'at', r.occurred_at))
                      FILTER (WHERE NOT r.new AND r.rn > r.max_attempts AND r.status = 'applied'), '[]'::jsonb)
      INTO v_exhausted, v_displaced
      FROM ranked r;
  END IF;

  -- Every claimed key is a fresh event's, and every fresh event with a claimed key enters
  -- the ledger: the claimed keys are the stored ones.
  WITH fresh AS (
    SELECT c.* FROM ${classified('c')}
     WHERE c.verdict = 'fresh'
  ),
  ins AS (
    INSERT INTO score_events (idempotency_key, board_id, period_key, member_id, category, value, occurred_at,
                              received_at, applied_at, source, payload_hash, metadata, status, subscore)
    SELECT f.key, f.board_id, f.period_key, f.member_id, f.category, f.value, f.occurred_at,
           f.received_at, p_now, f.source, f.payload_hash, f.metadata,
           CASE WHEN v_exhausted ? ${identity('f')} THEN 'exhausted' ELSE 'applied' END, f.subscore
      FROM fresh f
     WHERE v_claimed ? ${identity('f')}
    RETURNING idempotency_key, board_id, period_key, member_id, category, value, occurred_at, status, subscore
  ),
  expanded AS (
    SELECT i.*, k.cat, b.aggregation, b.sort_order, b.subscore_order AS sub_order
      FROM ins i
      JOIN boards b ON b.id = i.board_id
      ${scopesOf('i.category')}
     WHERE k.cat IS NOT NULL AND i.status = 'applied'
  ),
  ranked AS (${rankedEvents('expanded', 'x.board_id, x.period_key, x.cat, x.member_id')}
  ),
  contrib AS (
    SELECT r.board_id, r.period_key, r.cat, r.member_id, r.aggregation, r.sort_order, r.sub_order,
           ${winnerColumns('r')}, m.region
      FROM ranked r
      JOIN members m ON m.id = r.member_id
     WHERE r.rn = 1
  ),
  ${mergeAggregates('contrib', 'p_now')}
  SELECT count(*) INTO v_inserted FROM ins;

  -- The entries, numbered on from the period's last one. Only members whose events this batch
  -- stored enter (one that lost every key to a concurrent batch does not).
  IF v_capped THEN
    INSERT INTO board_entrants (board_id, period_key, position, member_id, entered_at)
    SELECT n.board_id, n.period_key,
           ${entrantCountSql('n.board_id', 'n.period_key')}
             + row_number() OVER (PARTITION BY n.board_id, n.period_key ORDER BY n.occurred_at, n.key COLLATE "C"),
           n.member_id, p_now
      FROM (SELECT DISTINCT ON (c.board_id, c.period_key, c.member_id) c.board_id, c.period_key, c.member_id, c.occurred_at, c.key
              FROM ${classified('c')}
              JOIN boards b ON b.id = c.board_id AND b.max_members IS NOT NULL
             WHERE c.verdict = 'fresh' AND v_claimed ? ${identity('c')}
             ORDER BY c.board_id, c.period_key, c.member_id, c.occurred_at, c.key COLLATE "C") n
     WHERE NOT EXISTS (SELECT 1 FROM board_entrants e
                        WHERE e.board_id = n.board_id AND e.period_key = n.period_key AND e.member_id = n.member_id);
    -- Leagues: a member is placed at their first stored event of the period, unless the previous
    -- period's close, which decides their tier, is still to come (it places them then).
    ${placeMembersSql(
      `(SELECT w.* FROM (SELECT DISTINCT ON (c.board_id, c.period_key, c.member_id)
                                c.board_id, c.period_key, c.member_id, c.occurred_at, c.key, c.starts_at
                           FROM ${classified('c')}
                           JOIN boards b ON b.id = c.board_id AND b.league IS NOT NULL
                          WHERE c.verdict = 'fresh' AND v_claimed ? ${identity('c')}
                          ORDER BY c.board_id, c.period_key, c.member_id, c.occurred_at, c.key COLLATE "C") w
         WHERE NOT ${placementWaitsSql('w.board_id', 'w.starts_at')})`,
      'p_now',
    )};
  END IF;

  IF jsonb_array_length(v_displaced) > 0 THEN
    UPDATE score_events e SET status = 'exhausted'
      FROM jsonb_to_recordset(v_displaced) AS d(key text, board text, at timestamptz)
     WHERE e.idempotency_key = d.key AND e.board_id = d.board AND e.occurred_at = d.at AND e.status = 'applied';
    -- A counted event left the first n: the member's aggregates are recounted from the
    -- events that still count, as a void does (rare: only an earlier event arriving late).
    PERFORM laurel_recompute_aggregates(d.board, d.period, d.member, NULL, p_now)
       FROM (SELECT DISTINCT x.board, x.period, x.member
               FROM jsonb_to_recordset(v_displaced) AS x(board text, period text, member text)
              ORDER BY 1, 2, 3) d;
  END IF;

  -- Final pass. An event classified fresh may still have lost a race with a concurrent
  -- batch holding the same key: it is then a duplicate or a conflict of the row that won.
  -- A (board, key) repeated in the batch shares its first copy's fate (a duplicate of it when that
  -- copy counts), or is a conflict when its payload differs. An event stored by this batch
  -- counts where it says; any other is looked up in the key table.
  WITH c AS (
    SELECT x.*, x.verdict = 'fresh' AND v_claimed ? ${identity('x')} AS stored_here FROM ${hashed('x')}
  ),
  decided AS (
    SELECT c.i, c.key, c.board_id, c.ord, c.verdict, c.payload_hash,
           CASE
             WHEN c.verdict IS NULL OR c.verdict = 'repeat' THEN NULL
             WHEN c.verdict <> 'fresh' THEN c.verdict
             WHEN c.stored_here THEN CASE WHEN v_exhausted ? ${identity('c')} THEN 'attempts_exhausted' ELSE 'applied' END
             WHEN se.payload_hash = c.payload_hash THEN 'duplicate'
             ELSE 'conflict'
           END AS outcome,
           CASE WHEN c.stored_here THEN c.board_id ELSE se.board_id END AS s_board,
           CASE WHEN c.stored_here THEN c.period_key ELSE se.period_key END AS s_period,
           CASE WHEN c.stored_here THEN c.member_id ELSE se.member_id END AS s_member,
           CASE WHEN c.stored_here THEN c.category ELSE se.category END AS s_category
      -- A probe per event not stored here, never a scan (see the first pass). OFFSET 0 keeps
      -- the subquery whole, so the event's own conditions gate the probe; merged into the
      -- join, they were checked after probing, for every event.
      FROM c LEFT JOIN LATERAL (SELECT k.* FROM score_event_keys k
                                 WHERE k.idempotency_key = c.h AND k.board_id = c.board_id
                                   AND NOT c.stored_here AND c.verdict <> 'repeat'
                                OFFSET 0) se ON true
  ),
  -- Beside each event, its (board, key)'s first copy (the one not a repeat).
  paired AS (
    SELECT d.i, d.verdict, d.payload_hash, d.outcome,
           first_value(d.outcome) OVER k AS f_outcome, first_value(d.payload_hash) OVER k AS f_hash,
           first_value(d.s_board) OVER k AS s_board, first_value(d.s_period) OVER k AS s_period,
           first_value(d.s_member) OVER k AS s_member, first_value(d.s_category) OVER k AS s_category
      FROM decided d
    WINDOW k AS (PARTITION BY d.board_id, d.key ORDER BY d.ord)
  ),
  everything AS (
    SELECT p.i,
           CASE WHEN p.verdict IS NULL OR p.f_outcome IS NULL THEN NULL
                WHEN p.verdict <> 'repeat' THEN p.outcome
                WHEN p.payload_hash <> p.f_hash THEN 'conflict'
                WHEN p.f_outcome IN ('applied', 'duplicate') THEN 'duplicate'
                ELSE p.f_outcome END AS outcome,
           p.s_board, p.s_period, p.s_member, p.s_category
      FROM paired p
  )
  SELECT array_agg(ROW(
           e.outcome,
           -- Where the key counts: only for events that count.
           CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_board END,
           CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_period END,
           CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_member END,
           CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_category END)::laurel_apply_outcome ORDER BY e.i)
    INTO v_out
    FROM everything e;

  INSERT INTO rejections (idempotency_key, reason, board_id, period_key, member_id, payload, payload_hash, source, received_at, rejected_at, occurred_at)
  SELECT f.key, f.outcome, f.board_id, f.period_key, f.member_id, f.payload, f.payload_hash, f.source, f.received_at, p_now, f.occurred_at
    FROM ${decided('f')}
   WHERE f.outcome IN ('conflict', 'period_closed', 'out_of_range', 'outside_window', 'board_full')
  ON CONFLICT DO NOTHING;

  -- Duplicates are not rejections, but rollups count them (insert-only: no hot row).
  INSERT INTO duplicate_log (board_id, period_key, at, duplicates)
  SELECT f.stored_board, f.stored_period, p_now, count(*)
    FROM ${decided('f')}
   WHERE f.outcome = 'duplicate'
   GROUP BY 1, 2;

  -- Every aggregate the batch touched, duplicates included: a retried job re-projects what
  -- an earlier attempt committed but never wrote to Redis.
  SELECT coalesce(jsonb_agg(laurel_aggregate_json(x.a, b.regions, m.excluded_at IS NOT NULL)), '[]'::jsonb)
    INTO v_aggregates
    FROM (SELECT DISTINCT f.stored_board, f.stored_period, k.cat, f.stored_member
            FROM ${decided('f')}
            ${scopesOf('f.stored_category')}
           WHERE f.outcome IN ('applied', 'duplicate') AND k.cat IS NOT NULL
          -- A member whose counted event was displaced was recounted in every category.
          UNION
          SELECT a.board_id, a.period_key, a.category, a.member_id
            FROM jsonb_to_recordset(v_displaced) AS d(board text, period text, member text)
            JOIN member_aggregates a ON a.board_id = d.board AND a.period_key = d.period AND a.member_id = d.member) t
    -- One lookup by the whole key per aggregate. As a plain join, stale statistics of a young
    -- table once planned it as a scan of the board's rows per aggregate (seconds per batch).
    CROSS JOIN LATERAL (SELECT a FROM member_aggregates a
                         WHERE a.board_id = t.stored_board AND a.period_key = t.stored_period
                           AND a.category = t.cat AND a.member_id = t.stored_member
                         LIMIT 1) AS x(a)
    JOIN boards b ON b.id = t.stored_board
    JOIN members m ON m.id = t.stored_member;

  RETURN jsonb_build_object(
    'results', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                  'ord', f.ord, 'key', f.key, 'outcome', f.outcome,
                  'board', coalesce(f.stored_board, f.board_id), 'period', coalesce(f.stored_period, f.period_key),
                  'member', coalesce(f.stored_member, f.member_id))), '[]'::jsonb)
                  FROM ${decided('f')}
                 WHERE f.outcome IS NOT NULL),
    'aggregates', v_aggregates,
    'createdPeriods', v_created);
END
$fn$`,
};
