import { sql, type Kysely } from 'kysely';

/**
 * Boards may run on a schedule: `every` (<n>h|d|w from an anchor) or `cron`.
 * The kind stays a column (the tick and closing read it), the schedule's parameters are
 * kept as posted in `period_schedule`, present exactly for those two kinds.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards DROP CONSTRAINT boards_period_kind_check`.execute(db);
  await sql`ALTER TABLE boards ADD COLUMN period_schedule jsonb`.execute(db);
  await sql`
    ALTER TABLE boards ADD CONSTRAINT boards_period_kind_check
      CHECK (period_kind IN ('all', 'day', 'week', 'month', 'every', 'cron')
             AND (period_kind IN ('every', 'cron')) = (period_schedule IS NOT NULL))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards DROP CONSTRAINT boards_period_kind_check`.execute(db);
  await sql`ALTER TABLE boards DROP COLUMN period_schedule`.execute(db);
  await sql`ALTER TABLE boards ADD CONSTRAINT boards_period_kind_check CHECK (period_kind IN ('all', 'day', 'week', 'month'))`.execute(
    db,
  );
}
