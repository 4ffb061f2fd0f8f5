import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE boards (
      id text COLLATE "C" PRIMARY KEY,
      display_name text NOT NULL,
      aggregation text NOT NULL CHECK (aggregation IN ('best', 'sum', 'last')),
      sort_order text NOT NULL CHECK (sort_order IN ('desc', 'asc')),
      tie_break text NOT NULL CHECK (tie_break IN ('first', 'last', 'member', 'shared')),
      period_kind text NOT NULL CHECK (period_kind IN ('all', 'day', 'week', 'month')),
      timezone text NOT NULL,
      decimals int NOT NULL CHECK (decimals BETWEEN 0 AND 6),
      min_value numeric,
      max_value numeric,
      categories text[] NOT NULL DEFAULT '{}',
      regions boolean NOT NULL DEFAULT false,
      grace_seconds int NOT NULL CHECK (grace_seconds BETWEEN 0 AND 86400),
      awards jsonb NOT NULL,
      revision int NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE periods (
      board_id text COLLATE "C" NOT NULL REFERENCES boards (id),
      key text COLLATE "C" NOT NULL,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz,
      state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closing', 'closed')),
      created_at timestamptz NOT NULL DEFAULT now(),
      closed_at timestamptz,
      PRIMARY KEY (board_id, key)
    )`.execute(db);

  await sql`
    CREATE TABLE members (
      id text COLLATE "C" PRIMARY KEY,
      display_name text,
      region text COLLATE "C",
      excluded_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE score_events (
      id bigserial PRIMARY KEY,
      idempotency_key text COLLATE "C" NOT NULL UNIQUE,
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      category text COLLATE "C",
      value bigint NOT NULL,
      occurred_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL,
      applied_at timestamptz NOT NULL,
      source text,
      payload_hash text NOT NULL,
      status text NOT NULL DEFAULT 'applied' CHECK (status IN ('applied', 'voided')),
      void_reason text,
      voided_at timestamptz,
      metadata jsonb,
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);
  await sql`CREATE INDEX score_events_member_idx ON score_events (board_id, period_key, member_id)`.execute(db);

  await sql`
    CREATE TABLE rejections (
      id bigserial PRIMARY KEY,
      idempotency_key text COLLATE "C" NOT NULL,
      reason text NOT NULL CHECK (reason IN ('period_closed', 'conflict', 'out_of_range')),
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C",
      member_id text COLLATE "C" NOT NULL,
      payload jsonb NOT NULL,
      payload_hash text NOT NULL,
      source text,
      received_at timestamptz NOT NULL,
      rejected_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (idempotency_key, reason, payload_hash)
    )`.execute(db);

  // One row per (board, period, category, member); category 'all' holds every event.
  // version increases with every write, so the Redis projection can drop stale writes.
  await sql`
    CREATE TABLE member_aggregates (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      category text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      value bigint NOT NULL CHECK (value BETWEEN -1099511627776 AND 1099511627776),
      reached_at timestamptz NOT NULL,
      last_key text COLLATE "C" NOT NULL,
      event_count int NOT NULL,
      region text COLLATE "C",
      version bigint NOT NULL DEFAULT 1,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (board_id, period_key, category, member_id),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      role text NOT NULL CHECK (role IN ('ingest', 'read', 'admin')),
      key_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['api_keys', 'member_aggregates', 'rejections', 'score_events', 'members', 'periods', 'boards']) {
    await db.schema.dropTable(table).execute();
  }
}
