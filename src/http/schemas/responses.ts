import { z } from 'zod';
import { ROLES } from '../../services/api-keys.js';
import { AGGREGATIONS, periodSpecSchema } from '../../domain/board.js';
import { SORT_ORDERS, TIE_BREAKS } from '../../domain/ranking.js';

/**
 * The shapes of Laurel's answers, one schema per shape. The OpenAPI document is generated
 * from them and test/integration/openapi-contract.test.ts checks every real answer against
 * that document, so a change to an answer that is not made here fails the build.
 * Objects are strict: a field added to an answer must be added here too.
 */

const instant = z.iso.datetime();
const role = z.enum(ROLES);

export const errorSchema = z
  .strictObject({
    error: z.string(),
    message: z.string(),
    details: z
      .array(z.strictObject({ index: z.number().int().optional(), path: z.string(), message: z.string() }))
      .optional(),
  })
  .meta({
    id: 'Error',
    description: 'Every 4xx and 5xx answer: a code, a human message and, for 400s, the fields at fault.',
  });

export const periodViewSchema = z
  .strictObject({
    key: z.string(),
    startsAt: instant,
    endsAt: instant.nullable(),
    state: z.enum(['open', 'closing', 'closed']),
  })
  .meta({ id: 'Period' });

export const awardsSettingsSchema = z
  .strictObject({
    tiers: z.array(z.number().int()),
    regionTiers: z.array(z.number().int()),
    followingTop1: z.boolean(),
  })
  .meta({ id: 'AwardSettings' });

export const boardViewSchema = z
  .strictObject({
    id: z.string(),
    displayName: z.string(),
    aggregation: z.enum(AGGREGATIONS),
    order: z.enum(SORT_ORDERS),
    tieBreak: z.enum(TIE_BREAKS),
    period: periodSpecSchema,
    timezone: z.string(),
    window: z.strictObject({ startsAt: instant.optional(), endsAt: instant.optional() }).nullable(),
    maxAttempts: z.number().int().nullable(),
    maxMembers: z.number().int().nullable(),
    league: z
      .strictObject({
        tiers: z.array(z.string()),
        bucketSize: z.number().int(),
        promote: z.number().int(),
        relegate: z.number().int(),
        startTier: z.string(),
      })
      .nullable(),
    subscore: z.strictObject({ order: z.enum(SORT_ORDERS) }).nullable(),
    decimals: z.number().int(),
    minValue: z.number().nullable(),
    maxValue: z.number().nullable(),
    categories: z.array(z.string()),
    regions: z.boolean(),
    graceSeconds: z.number().int(),
    awards: awardsSettingsSchema,
    createdAt: instant,
    updatedAt: instant,
    currentPeriod: periodViewSchema.nullable().meta({
      description: 'null outside the board window: before it opens and once it has ended',
    }),
  })
  .meta({ id: 'Board' });

export const boardListSchema = z.strictObject({ boards: z.array(boardViewSchema) }).meta({ id: 'BoardList' });

export const acceptedSchema = z
  .strictObject({
    accepted: z.number().int(),
    jobId: z
      .string()
      .optional()
      .meta({ description: 'with wait=true only, when the batch was not applied within 5 s' }),
    pending: z.literal(true).optional(),
  })
  .meta({ id: 'Accepted' });

export const eventResultsSchema = z
  .strictObject({
    results: z.array(
      z.strictObject({
        idempotencyKey: z.string(),
        board: z.string().meta({ description: "the event's board: an event is (board, idempotencyKey)" }),
        status: z.enum(['applied', 'duplicate', 'rejected']),
        reason: z.string().optional(),
        period: z.string(),
        score: z.number().nullable(),
        rank: z.number().int().nullable(),
        previousScore: z.number().nullable().meta({ description: "the member's (all, world) score before the batch" }),
        previousRank: z
          .number()
          .int()
          .nullable()
          .meta({ description: "the member's (all, world) rank before the batch" }),
      }),
    ),
  })
  .meta({ id: 'EventResults' });

const storedEvent = z.strictObject({
  idempotencyKey: z.string(),
  status: z.enum(['applied', 'voided', 'rejected']),
  reason: z
    .literal('attempts_exhausted')
    .optional()
    .meta({ description: "a stored event beyond the member's first maxAttempts of the period" }),
  board: z.string(),
  period: z.string(),
  member: z.string(),
  category: z.string().nullable(),
  value: z.number(),
  occurredAt: instant,
  receivedAt: instant,
  appliedAt: instant,
  source: z.string().nullable(),
  score: z.number().nullable(),
  voidReason: z.string().nullable().optional(),
  voidedAt: instant.optional(),
});
const pendingEvent = z.strictObject({
  idempotencyKey: z.string(),
  status: z.literal('pending'),
  jobId: z.string().nullable(),
  board: z.string(),
  member: z.string(),
  period: z.string().nullable(),
  receivedAt: instant,
  score: z.number().nullable(),
});
const rejectedEvent = z.strictObject({
  idempotencyKey: z.string(),
  status: z.literal('rejected'),
  reason: z.string(),
  board: z.string(),
  period: z.string().nullable(),
  member: z.string(),
  source: z.string().nullable(),
  receivedAt: instant,
  rejectedAt: instant,
  score: z.number().nullable(),
  payload: z.unknown(),
});
export const eventStatusSchema = z.union([storedEvent, pendingEvent, rejectedEvent]).meta({ id: 'EventStatus' });

export const periodCloseSchema = z
  .strictObject({ board: z.string(), period: z.string().meta({ description: "the period's key" }) })
  .meta({ id: 'PeriodClose' });

export const memberRemovalSchema = z
  .strictObject({
    board: z.string(),
    period: z.string().meta({ description: "the period's key" }),
    member: z.string(),
    voided: z.number().int().meta({ description: 'applied events voided' }),
  })
  .meta({ id: 'MemberRemoval' });

export const voidedEventSchema = z
  .strictObject({
    idempotencyKey: z.string(),
    board: z.string(),
    status: z.literal('voided'),
    reason: z.string().nullable(),
  })
  .meta({ id: 'VoidedEvent' });

const scopeHeader = {
  board: z.string(),
  period: periodViewSchema,
  category: z.string(),
  region: z.string(),
  total: z.number().int(),
  source: z.enum(['cache', 'database']),
};

export const standingEntrySchema = z
  .strictObject({
    rank: z.number().int(),
    member: z.string(),
    displayName: z.string().nullable(),
    score: z.number(),
    subscore: z
      .number()
      .optional()
      .meta({ description: 'on a board with a subscore: the aggregated subscore, ordering equal scores' }),
    metadata: z.record(z.string(), z.unknown()).nullable().optional().meta({
      description: "with metadata=true: the metadata of the event that produced the member's current value, or null",
    }),
  })
  .meta({ id: 'StandingEntry' });

const placement = {
  rank: z.number().int().nullable(),
  score: z.number().nullable(),
  percentile: z.number().nullable(),
  topPercent: z.number().int().nullable(),
};

export const standingsPageSchema = z
  .strictObject({
    ...scopeHeader,
    limit: z.number().int(),
    offset: z.number().int(),
    entries: z.array(standingEntrySchema),
    me: z
      .strictObject({ member: z.string(), ...placement })
      .optional()
      .meta({ description: "with `member`: that member's placement (rank null without a score)" }),
  })
  .meta({ id: 'StandingsPage' });

export const memberStandingSchema = z
  .strictObject({ ...scopeHeader, member: z.string(), ...placement })
  .meta({ id: 'MemberStanding' });

/** What it takes to pass one target: its place and score, the score needed and how far that is. */
const toReach = {
  rank: z.number().int(),
  score: z.number(),
  needed: z.number().meta({
    description:
      'the aggregate score that ranks the member ahead of the target (or level, on `shared` boards) if reached now',
  }),
  gap: z.number().nullable().meta({ description: '|needed − score| of the member; null for a member without a score' }),
};

export const memberGoalsSchema = z
  .strictObject({
    board: z.string(),
    period: periodViewSchema,
    category: z.string(),
    region: z.string(),
    source: z.enum(['cache', 'database']),
    member: z.string(),
    rank: z.number().int().nullable(),
    score: z.number().nullable(),
    next: z
      .strictObject({ member: z.string(), ...toReach })
      .nullable()
      .meta({ description: 'the entry just above in the listing order; null at the top or without a score' }),
    following: z.array(z.strictObject({ member: z.string(), ...toReach })).meta({
      description:
        'followed members ranked above, nearest first (without a score: the ranked ones, lowest first); at most 10',
    }),
    awards: z.array(z.strictObject({ award: z.string(), ...toReach })).meta({
      description: 'per award tier of the scope not reached yet: the entry at that position of the listing order',
    }),
    league: z
      .strictObject({ zone: z.literal('promote'), ...toReach })
      .nullable()
      .meta({ description: "on a league board: the lowest promoting place of the member's bucket, when not in it" }),
  })
  .meta({ id: 'MemberGoals' });

export const cutoffsSchema = z
  .strictObject({
    ...scopeHeader,
    ranks: z.array(z.strictObject({ rank: z.number().int(), score: z.number().nullable() })),
    percents: z.array(
      z.strictObject({
        percent: z.number(),
        rank: z.number().int().meta({ description: 'the position max(1, ceil(total × percent / 100))' }),
        score: z.number().nullable(),
      }),
    ),
  })
  .meta({ id: 'Cutoffs', description: 'scores at positions of the listing order; null past the end' });

/** The `closed` event of a stream, its last message: the period it watched has ended. */
export const streamClosedSchema = z
  .strictObject({ board: z.string(), period: periodViewSchema })
  .meta({ id: 'StreamClosed' });

export const aroundSchema = z
  .strictObject({
    ...scopeHeader,
    member: z.string(),
    rank: z.number().int().nullable(),
    radius: z.number().int(),
    entries: z.array(standingEntrySchema),
  })
  .meta({ id: 'AroundMember' });

export const followingStandingsSchema = z
  .strictObject({
    ...scopeHeader,
    member: z.string(),
    rank: z.number().int().nullable(),
    following: z.number().int(),
    entries: z.array(standingEntrySchema),
  })
  .meta({ id: 'FollowingStandings' });

export const memberBoardsSchema = z
  .strictObject({
    member: z.string(),
    standings: z.array(
      z.strictObject({
        board: z.string(),
        period: periodViewSchema,
        total: z.number().int(),
        source: z.enum(['cache', 'database']),
        ...placement,
      }),
    ),
  })
  .meta({ id: 'MemberStandings' });

export const memberEventsSchema = z
  .strictObject({
    member: z.string(),
    events: z.array(
      z.strictObject({
        idempotencyKey: z.string(),
        board: z.string(),
        period: z.string().nullable(),
        status: z.enum(['applied', 'voided', 'rejected']),
        reason: z.string().nullable().meta({ description: 'the rejection reason, or the void reason' }),
        value: z
          .number()
          .nullable()
          .meta({ description: 'as posted; null for a rejected payload without a numeric value' }),
        occurredAt: instant,
        receivedAt: instant,
        source: z.string().nullable(),
        metadata: z.unknown(),
      }),
    ),
    nextCursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null at the end' }),
  })
  .meta({ id: 'MemberEvents' });

export const erasureQueuedSchema = z.strictObject({ erasureId: z.uuid() }).meta({ id: 'ErasureQueued' });

export const erasureStatusSchema = z
  .strictObject({
    erasureId: z.uuid(),
    state: z.enum(['queued', 'running', 'done', 'failed']),
    requestedAt: instant,
    finishedAt: instant.nullable(),
  })
  .meta({ id: 'Erasure' });

export const periodListSchema = z
  .strictObject({ board: z.string(), periods: z.array(periodViewSchema) })
  .meta({ id: 'PeriodList' });

export const boardRegionsSchema = z
  .strictObject({
    board: z.string(),
    period: periodViewSchema,
    regions: z.array(z.string()).meta({
      description:
        "the regions of the period's ranked members (a closed period's: of its final results), sorted by their bytes; none on a board without regions",
    }),
  })
  .meta({ id: 'BoardRegions' });

export const periodResultsSchema = z
  .strictObject({
    ...scopeHeader,
    source: z.literal('database'),
    limit: z.number().int(),
    offset: z.number().int(),
    entries: z.array(standingEntrySchema),
    awards: z.array(z.strictObject({ member: z.string(), award: z.string(), rank: z.number().int() })),
  })
  .meta({ id: 'PeriodResults' });

export const memberViewSchema = z
  .strictObject({
    member: z.string(),
    displayName: z.string().nullable(),
    region: z.string().nullable(),
    excluded: z.boolean(),
    exclusions: z
      .array(
        z.strictObject({
          reason: z.string(),
          excludedBy: z.string(),
          excludedAt: instant,
          restoredBy: z.string().nullable(),
          restoredAt: instant.nullable(),
          restoreReason: z.string().nullable().meta({ description: 'the reason given with the restore, if any' }),
        }),
      )
      .optional()
      .meta({ description: 'admin keys only' }),
  })
  .meta({ id: 'Member' });

export const memberSearchSchema = z
  .strictObject({
    members: z.array(
      z.strictObject({
        id: z.string(),
        displayName: z.string().nullable(),
        region: z.string().nullable(),
        excluded: z.boolean(),
      }),
    ),
  })
  .meta({
    id: 'MemberSearch',
    description: 'Members found by id prefix (id byte order), then by display name prefix (by name), each once.',
  });

export const followingListSchema = z
  .strictObject({ member: z.string(), memberIds: z.array(z.string()) })
  .meta({ id: 'FollowingList' });

export const membersUpdatedSchema = z
  .strictObject({ updated: z.number().int() })
  .meta({ id: 'MembersUpdated', description: 'How many distinct members the batch updated.' });

export const playerTokenSchema = z
  .strictObject({ token: z.string(), member: z.string(), expiresAt: instant })
  .meta({ id: 'PlayerToken', description: 'A player token for one member: send it as Authorization: Bearer <token>.' });

export const memberAwardsSchema = z
  .strictObject({
    member: z.string(),
    awards: z.array(
      z.strictObject({
        board: z.string(),
        period: z.string(),
        category: z.string(),
        region: z.string(),
        award: z.string(),
        rank: z.number().int(),
        grantedAt: instant,
      }),
    ),
  })
  .meta({ id: 'MemberAwards' });

export const notificationsSchema = z
  .strictObject({
    member: z.string(),
    notifications: z.array(
      z.strictObject({
        id: z.union([z.string(), z.number().int()]),
        kind: z.string(),
        board: z.string(),
        period: z.string(),
        rank: z.number().int().nullable(),
        title: z.string(),
        body: z.string(),
        award: z.string().nullable(),
        createdAt: instant,
      }),
    ),
  })
  .meta({ id: 'Notifications' });

export const rebuildQueuedSchema = z
  .strictObject({ rebuildId: z.string(), scopes: z.number().int() })
  .meta({ id: 'RebuildQueued' });

export const rebuildStatusSchema = z
  .strictObject({
    rebuildId: z.string(),
    state: z.string(),
    request: z.strictObject({
      board: z.string().nullable(),
      period: z.string().nullable(),
      fromEvents: z.boolean(),
      trigger: z.string(),
      requestedAt: instant,
    }),
    progress: z.strictObject({
      done: z.number().int(),
      failed: z.number().int(),
      total: z.number().int(),
      percent: z.number().int(),
    }),
    scopes: z.array(
      z.strictObject({
        board: z.string(),
        period: z.string(),
        category: z.string(),
        members: z.number().int(),
        durationMs: z.number(),
        recomputed: z.boolean(),
      }),
    ),
    startedAt: instant,
    finishedAt: instant.nullable(),
    durationMs: z.number().nullable(),
  })
  .meta({ id: 'RebuildStatus' });

export const createdKeySchema = z
  .strictObject({
    id: z.uuid(),
    name: z.string(),
    role,
    key: z.string().meta({ description: 'shown once' }),
    createdAt: instant,
  })
  .meta({ id: 'CreatedKey' });

export const statsSchema = z
  .strictObject({
    from: instant,
    to: instant,
    rollups: z.array(
      z.strictObject({
        board: z.string(),
        period: z.string(),
        hour: instant,
        applied: z.number().int(),
        duplicates: z.number().int(),
        rejected: z.strictObject({
          periodClosed: z.number().int(),
          conflict: z.number().int(),
          outOfRange: z.number().int(),
          outsideWindow: z.number().int(),
          boardFull: z.number().int(),
          attemptsExhausted: z
            .number()
            .int()
            .meta({ description: "events beyond their member's maxAttempts: kept in the ledger, never counted" }),
        }),
        members: z.number().int().meta({ description: 'distinct members with an event applied in the hour' }),
        lagP50Ms: z
          .number()
          .nullable()
          .meta({ description: 'event-to-visible lag (received to projected), to two significant figures' }),
        lagP99Ms: z.number().nullable(),
        voids: z.number().int(),
        rebuilds: z.number().int(),
        rebuildMs: z.number(),
        moderation: z
          .strictObject({
            exclusions: z.number().int(),
            restores: z.number().int(),
            voids: z.number().int(),
            erasures: z.number().int(),
          })
          .meta({ description: 'moderation acts that touched the board and period in the hour (voids as in `voids`)' }),
      }),
    ),
  })
  .meta({ id: 'Stats' });

export const healthSchema = z.strictObject({ status: z.literal('ok') }).meta({ id: 'Health' });

export const readinessSchema = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    failing: z.array(z.string()).optional(),
    checks: z.record(z.string(), z.string()).optional(),
  })
  .meta({ id: 'Readiness' });

export const entrantSchema = z
  .strictObject({ board: z.string(), period: z.string(), member: z.string(), enteredAt: instant })
  .meta({ id: 'Entrant', description: "a member's entry into a period of a maxMembers board" });

export const entrantsPageSchema = z
  .strictObject({
    board: z.string(),
    period: periodViewSchema,
    total: z.number().int(),
    entrants: z.array(z.strictObject({ member: z.string(), enteredAt: instant })),
    nextCursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null at the end' }),
  })
  .meta({ id: 'EntrantsPage', description: 'entrants in the order they entered' });

export const leagueStandingsSchema = z
  .strictObject({
    board: z.string(),
    period: periodViewSchema,
    tier: z.string(),
    bucket: z
      .string()
      .nullable()
      .meta({ description: 'null before the member is placed (their first event of the period)' }),
    rank: z.number().int().nullable(),
    total: z.number().int(),
    promote: z.number().int(),
    relegate: z.number().int(),
    entries: z.array(
      z.strictObject({
        rank: z.number().int(),
        member: z.string(),
        displayName: z.string().nullable(),
        score: z.number(),
        zone: z.enum(['promote', 'relegate']).nullable(),
      }),
    ),
  })
  .meta({ id: 'LeagueStandings', description: "a league bucket ranked with the board's tie rule" });

export const memberLeaguesSchema = z
  .strictObject({ member: z.string(), leagues: z.array(z.strictObject({ board: z.string(), tier: z.string() })) })
  .meta({ id: 'MemberLeagues', description: 'per league board, the tier the member plays in next' });
