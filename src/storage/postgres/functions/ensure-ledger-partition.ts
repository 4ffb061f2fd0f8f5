import type { StoredFunction } from './stored-function.js';

/**
 * Creates the ledger partition of p_month's UTC month unless it exists, moving that month's
 * rows out of the default partition; true when created. Called by
 * storage/postgres/ledger-partitions.ts (ensureMonthPartition) and after every migration
 * (storage/postgres/migrator.ts).
 */
export const ensureLedgerPartition: StoredFunction = {
  name: 'laurel_ensure_ledger_partition',
  definition: `
CREATE OR REPLACE FUNCTION laurel_ensure_ledger_partition(p_month date)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_month date := date_trunc('month', p_month)::date;
  v_name text := 'score_events_' || to_char(date_trunc('month', p_month), '"p"YYYY_MM');
  v_from timestamptz := date_trunc('month', p_month)::timestamp AT TIME ZONE 'UTC';
  v_to timestamptz := (date_trunc('month', p_month) + interval '1 month')::timestamp AT TIME ZONE 'UTC';
BEGIN
  -- One maintainer at a time (ticks on several workers, the archive command).
  PERFORM pg_advisory_xact_lock(hashtext('laurel_ledger_partitions'));
  IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'score_events'::regclass AND c.relname = v_name) THEN
    RETURN false;
  END IF;
  -- Inserts routed to the default partition wait until the month's rows have moved and the
  -- new partition is attached; inserts into other partitions go on (ATTACH takes only
  -- SHARE UPDATE EXCLUSIVE on score_events, where CREATE TABLE ... PARTITION OF would
  -- take ACCESS EXCLUSIVE and stop every batch).
  LOCK TABLE score_events_default IN ACCESS EXCLUSIVE MODE;
  EXECUTE format('CREATE TABLE %I (LIKE score_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', v_name);
  -- The bound as a constraint lets ATTACH skip its validation scan.
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (occurred_at >= %L AND occurred_at < %L)', v_name, v_name || '_bounds', v_from, v_to);
  EXECUTE format('WITH moved AS (DELETE FROM score_events_default WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING *)
                  INSERT INTO %I SELECT * FROM moved', v_name) USING v_from, v_to;
  EXECUTE format('ALTER TABLE score_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', v_name, v_from, v_to);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_name, v_name || '_bounds');
  RETURN true;
END
$fn$`,
};
