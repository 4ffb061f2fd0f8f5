import type { ColumnType, Generated } from 'kysely';
import type { Role } from './api-keys-repository.js';
import type { RejectionReason } from './events-repository.js';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface BoardsTable {
  id: string;
  display_name: string;
  aggregation: string;
  sort_order: string;
  tie_break: string;
  period_kind: string;
  /** The `every` or `cron` schedule, null for calendar kinds. */
  period_schedule: ColumnType<unknown, string | null, string | null>;
  timezone: string;
  window_starts_at: Date | null;
  window_ends_at: Date | null;
  max_attempts: number | null;
  max_members: number | null;
  league: ColumnType<unknown, string | null, string | null>;
  /** Null: the board has no subscore. */
  subscore_order: string | null;
  decimals: number;
  /** numeric: pg returns it as a string to keep it exact. */
  min_value: string | null;
  max_value: string | null;
  categories: string[];
  regions: boolean;
  grace_seconds: number;
  awards: ColumnType<unknown, string, string>;
  revision: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface PeriodsTable {
  board_id: string;
  key: string;
  starts_at: Timestamp;
  ends_at: Timestamp | null;
  state: Generated<'open' | 'closing' | 'closed'>;
  created_at: Generated<Date>;
  closed_at: Date | null;
  closing_started_at: Date | null;
  webhooks_enqueued_at: Date | null;
  cache_evicted_at: Date | null;
  /** A league close whose waiting members are not placed yet. */
  league_waiting: Generated<boolean>;
  /** Closed now by an operator: the moment asked (ends_at moved to it; no grace), and why. */
  close_requested_at: Date | null;
  close_reason: string | null;
}

export interface MembersTable {
  id: string;
  display_name: string | null;
  region: string | null;
  excluded_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ScoreEventsTable {
  id: Generated<number>;
  idempotency_key: string;
  board_id: string;
  period_key: string;
  member_id: string;
  category: string | null;
  value: number;
  occurred_at: Date;
  received_at: Date;
  applied_at: Date;
  source: string | null;
  payload_hash: string;
  /** `exhausted`: beyond the member's first maxAttempts events of the period; never counted. */
  status: Generated<'applied' | 'voided' | 'exhausted'>;
  void_reason: string | null;
  voided_at: Date | null;
  metadata: unknown;
  subscore: number | null;
}

/** Global idempotency: one row per key ever applied, kept when its ledger month is archived. */
export interface ScoreEventKeysTable {
  idempotency_key: string;
  payload_hash: string;
  board_id: string;
  period_key: string;
  member_id: string;
  category: string | null;
  occurred_at: Date;
}

export interface LedgerArchivesTable {
  month: Timestamp;
  archive_table: string;
  /** Null until the detached table is counted and its periods recorded. */
  events: number | null;
  detached_at: Timestamp;
  file: string | null;
  file_written_at: Timestamp | null;
  dropped_at: Timestamp | null;
}

export interface LedgerArchivedPeriodsTable {
  board_id: string;
  period_key: string;
  month: Timestamp;
  events: number;
}

export interface RejectionsTable {
  id: Generated<number>;
  idempotency_key: string;
  reason: RejectionReason;
  board_id: string;
  period_key: string | null;
  member_id: string;
  payload: unknown;
  payload_hash: string;
  source: string | null;
  received_at: Date;
  rejected_at: Generated<Date>;
  /** Null only in rows a worker of the release before this column wrote. */
  occurred_at: Date | null;
}

export interface ErasuresTable {
  id: string;
  /** `hmac-sha256:<hex>` of the member id (erasure-service.ts); null once the erasure is done. */
  member_hash: string | null;
  pseudonym: string;
  state: Generated<'queued' | 'running' | 'done' | 'failed'>;
  requested_at: Date;
  finished_at: Date | null;
  redis_periods: unknown;
}

export interface MemberAggregatesTable {
  board_id: string;
  period_key: string;
  category: string;
  member_id: string;
  value: number;
  reached_at: Date;
  last_key: string;
  event_count: number;
  region: string | null;
  /** 0 when no counted event carried one. */
  subscore: Generated<number>;
  version: Generated<number>;
  updated_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: Generated<string>;
  name: string;
  role: Role;
  key_hash: string;
  created_at: Generated<Date>;
  revoked_at: Date | null;
}

export interface MemberFollowsTable {
  member_id: string;
  followed_id: string;
  created_at: Generated<Date>;
}

export interface MemberExclusionsTable {
  id: Generated<number>;
  member_id: string;
  reason: string;
  excluded_by: string;
  excluded_at: Date;
  restored_by: string | null;
  restored_at: Date | null;
  restore_reason: string | null;
}

export interface PeriodResultsTable {
  board_id: string;
  period_key: string;
  category: string;
  region: string;
  position: number;
  rank: number;
  member_id: string;
  value: number;
  subscore: number | null;
}

export interface AwardsTable {
  board_id: string;
  period_key: string;
  category: string;
  region: string;
  member_id: string;
  award: string;
  rank: number;
  granted_at: Date;
}

export interface NotificationsTable {
  id: Generated<number>;
  member_id: string;
  kind: string;
  board_id: string;
  period_key: string;
  rank: number | null;
  title: string;
  body: string;
  award: string | null;
  created_at: Date;
}

export interface RollupsTable {
  board_id: string;
  period_key: string;
  hour: Date;
  applied: number;
  duplicates: number;
  rejected_period_closed: number;
  rejected_conflict: number;
  rejected_out_of_range: number;
  rejected_outside_window: Generated<number>;
  rejected_board_full: Generated<number>;
  rejected_attempts_exhausted: Generated<number>;
  members: number;
  lag_p50_ms: number | null;
  lag_p99_ms: number | null;
  voids: number;
  rebuilds: number;
  rebuild_ms: number;
  exclusions: Generated<number>;
  restores: Generated<number>;
  erasures: Generated<number>;
  computed_at: Date;
}

/** Insert-only: one row per batch that saw duplicates, per (board, period); rollups count them. */
export interface DuplicateLogTable {
  board_id: string;
  period_key: string;
  at: Date;
  duplicates: number;
}

/** Insert-only: one row per (board, period) a moderation act touched; rollups count them. */
export interface ModerationLogTable {
  board_id: string;
  period_key: string;
  at: Date;
  kind: 'exclusion' | 'restore' | 'void' | 'erasure';
}

/** Which definition (hash of its text) of each stored function is installed. */
export interface LaurelFunctionsTable {
  name: string;
  hash: string;
  installed_at: Generated<Date>;
  /** md5 of pg_get_functiondef right after this definition was installed. */
  catalog_hash: string | null;
}

/** maxMembers entrants of a period, numbered 1..n in the order they entered. */
export interface BoardEntrantsTable {
  board_id: string;
  period_key: string;
  position: number;
  member_id: string;
  entered_at: Date;
}

export interface LeagueTiersTable {
  board_id: string;
  member_id: string;
  tier: string;
}

/** A member's bucket of a period; the close fills in the last three. */
export interface LeaguePlacementsTable {
  board_id: string;
  period_key: string;
  member_id: string;
  tier: string;
  slot: number;
  bucket: string;
  placed_at: Date;
  bucket_rank: number | null;
  outcome: 'promoted' | 'relegated' | 'kept' | null;
  next_tier: string | null;
}

export interface RebuildLogTable {
  board_id: string;
  period_key: string;
  category: string;
  members: number;
  duration_ms: number;
  finished_at: Date;
}

export interface Database {
  boards: BoardsTable;
  periods: PeriodsTable;
  members: MembersTable;
  score_events: ScoreEventsTable;
  score_event_keys: ScoreEventKeysTable;
  ledger_archives: LedgerArchivesTable;
  ledger_archived_periods: LedgerArchivedPeriodsTable;
  rejections: RejectionsTable;
  erasures: ErasuresTable;
  member_aggregates: MemberAggregatesTable;
  api_keys: ApiKeysTable;
  member_follows: MemberFollowsTable;
  member_exclusions: MemberExclusionsTable;
  period_results: PeriodResultsTable;
  awards: AwardsTable;
  notifications: NotificationsTable;
  rollups: RollupsTable;
  rebuild_log: RebuildLogTable;
  duplicate_log: DuplicateLogTable;
  moderation_log: ModerationLogTable;
  laurel_functions: LaurelFunctionsTable;
  board_entrants: BoardEntrantsTable;
  league_tiers: LeagueTiersTable;
  league_placements: LeaguePlacementsTable;
}
