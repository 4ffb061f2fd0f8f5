import { z } from 'zod';
import { BOARD_ID, CATEGORY_ID, ALL_CATEGORIES, isSafeText, UNSAFE_TEXT_MESSAGE } from './ids.js';
import {
  PERIOD_KINDS,
  anchorProblem,
  cronProblem,
  everyProblem,
  isValidTimezone,
  specId,
  type BoardWindow,
  type PeriodSpec,
} from './period.js';
import { SORT_ORDERS, TIE_BREAKS, type SortOrder, type TieBreak } from './ranking.js';
import { scaleNumber } from './decimal.js';

export const AGGREGATIONS = ['best', 'sum', 'last'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export interface Awards {
  tiers: number[];
  regionTiers: number[];
  followingTop1: boolean;
}

/** Leagues (docs/design/leagues.md): tiers lowest first; buckets of a tier hold up to bucketSize members. */
export interface League {
  tiers: string[];
  bucketSize: number;
  promote: number;
  relegate: number;
  /** Where a member new to the board starts (stored filled in: the lowest tier by default). */
  startTier: string;
}

export interface Board {
  id: string;
  displayName: string;
  aggregation: Aggregation;
  order: SortOrder;
  tieBreak: TieBreak;
  period: PeriodSpec;
  timezone: string;
  /** Events outside it are rejected `outside_window`; null: always open. */
  window: BoardWindow | null;
  /** Per member and period, only the first maxAttempts events by (occurredAt, key) count. */
  maxAttempts: number | null;
  /** Per period, only the first maxMembers members to enter may score; null: no cap. */
  maxMembers: number | null;
  /** Tiers and buckets (docs/design/leagues.md); null: no league. */
  league: League | null;
  /** Orders equal scores before the tie rule (docs/design/projection.md); null: the board has none. */
  subscore: { order: SortOrder } | null;
  decimals: number;
  minValue: number | null;
  maxValue: number | null;
  categories: string[];
  regions: boolean;
  graceSeconds: number;
  awards: Awards;
  /** Bumped on every change; a worker that routed events with an older revision redoes it. */
  revision: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Fields that decide where and how stored events count. The API fixes aggregation, order,
 * tieBreak and period once a board has events; timezone (period boundaries) and decimals
 * (the scale of stored values) would silently reinterpret the ledger too, and `regions` decides
 * which scopes the stored aggregates belong to, so they are fixed as well; so is maxAttempts,
 * which decides which stored events count, and subscore, which decides their order.
 */
export const FIXED_FIELDS = [
  'aggregation',
  'order',
  'tieBreak',
  'period',
  'timezone',
  'decimals',
  'regions',
  'maxAttempts',
  'league',
  'subscore',
] as const;

const tier = z.number().int().min(1).max(1_000_000);

const leagueSchema = z
  .strictObject({
    tiers: z
      .array(z.string().regex(CATEGORY_ID, 'must match ^[A-Za-z0-9_-]{1,64}$'))
      .min(2)
      .max(20)
      .refine((list) => new Set(list).size === list.length, 'must not repeat a tier'),
    bucketSize: z.number().int().min(2).max(1000),
    promote: z.number().int().min(0).max(1000),
    relegate: z.number().int().min(0).max(1000),
    startTier: z.string().optional().meta({ description: 'the tier of a member new to the board; default the lowest' }),
  })
  .nullable()
  .default(null)
  .meta({
    description:
      'tiers (lowest first) and buckets; only on boards whose periods close; fixed once the board has events',
  });

const everySchema = z
  .strictObject({
    every: z
      .string()
      .refine((v) => everyProblem(v) === null, { error: (i) => everyProblem(String(i.input)) ?? 'invalid' }),
    anchor: z.iso
      .datetime({ offset: true })
      .refine((v) => anchorProblem(v) === null, 'must be on a whole minute (period keys name minutes)'),
  })
  .meta({
    description: 'back-to-back periods of n hours (absolute), days or weeks (local wall time kept) from anchor',
  });
// Five fields here; whether the expression ever ticks is checked with the board's timezone below.
const cronSchema = z.strictObject({ cron: z.string().max(200) }).meta({
  description: 'a period runs from one tick of this 5-field cron expression (in the board timezone) to the next',
});
export const periodSpecSchema = z.union([z.enum(PERIOD_KINDS), everySchema, cronSchema], {
  error: 'must be all, day, week, month, { every, anchor } or { cron }',
});

export const boardDefinitionSchema = z
  .object({
    displayName: z.string().min(1).max(200).refine(isSafeText, UNSAFE_TEXT_MESSAGE).optional(),
    aggregation: z.enum(AGGREGATIONS),
    order: z.enum(SORT_ORDERS).default('desc'),
    tieBreak: z.enum(TIE_BREAKS).default('first'),
    period: periodSpecSchema.default('month'),
    timezone: z.string().refine(isValidTimezone, 'must be an IANA time zone name').default('UTC'),
    window: z
      .strictObject({
        startsAt: z.iso.datetime({ offset: true }).optional(),
        endsAt: z.iso.datetime({ offset: true }).optional(),
      })
      .nullable()
      .default(null)
      .meta({
        description:
          'events whose occurredAt is outside [startsAt, endsAt) are rejected outside_window; an `all` board closes at endsAt + graceSeconds',
      }),
    maxAttempts: z.number().int().min(1).max(10_000).nullable().default(null),
    league: leagueSchema,
    maxMembers: z.number().int().min(1).max(10_000_000).nullable().default(null).meta({
      description:
        'per period, the first maxMembers members to have an event applied are entrants; other members are rejected board_full',
    }),
    subscore: z
      .strictObject({ order: z.enum(SORT_ORDERS) })
      .nullable()
      .default(null)
      .meta({
        description: 'equal scores are ordered by the aggregated subscore (desc: higher first), then by tieBreak',
      }),
    decimals: z.number().int().min(0).max(6).default(0),
    minValue: z.number().nullable().default(null),
    maxValue: z.number().nullable().default(null),
    categories: z
      .array(
        z
          .string()
          .regex(CATEGORY_ID, 'must match ^[A-Za-z0-9_-]{1,64}$')
          .refine((c) => c !== ALL_CATEGORIES, '"all" is reserved'),
      )
      .max(100)
      .refine((list) => new Set(list).size === list.length, 'must not repeat a category')
      .default([]),
    regions: z.boolean().default(false),
    graceSeconds: z.number().int().min(0).max(86400).default(300),
    awards: z
      .object({
        tiers: z.array(tier).max(20).default([1, 10, 50, 100]),
        regionTiers: z.array(tier).max(20).default([50]),
        followingTop1: z.boolean().default(true),
      })
      .strict()
      .default({ tiers: [1, 10, 50, 100], regionTiers: [50], followingTop1: true }),
  })
  .strict()
  .superRefine((def, ctx) => {
    if (typeof def.period === 'object' && 'cron' in def.period && isValidTimezone(def.timezone)) {
      const problem = cronProblem(def.period.cron, def.timezone);
      if (problem) ctx.addIssue({ code: 'custom', path: ['period', 'cron'], message: problem });
    }
    const { startsAt, endsAt } = def.window ?? {};
    if (startsAt && endsAt && Date.parse(startsAt) >= Date.parse(endsAt)) {
      ctx.addIssue({ code: 'custom', path: ['window', 'endsAt'], message: 'must be after startsAt' });
    }
    if (def.league) {
      const { startTier, tiers } = def.league;
      if (startTier !== undefined && !tiers.includes(startTier))
        ctx.addIssue({ code: 'custom', path: ['league', 'startTier'], message: 'must be one of tiers' });
      if (def.period === 'all' && !def.window?.endsAt) {
        ctx.addIssue({
          code: 'custom',
          path: ['league'],
          message: 'needs periods that close (an `all` period closes only with window.endsAt)',
        });
      }
    }
    for (const field of ['minValue', 'maxValue'] as const) {
      const v = def[field];
      if (v === null) continue;
      const scaled = scaleNumber(v, def.decimals);
      if (!scaled.ok) ctx.addIssue({ code: 'custom', path: [field], message: `${scaled.reason}` });
    }
    if (def.minValue !== null && def.maxValue !== null && def.minValue > def.maxValue) {
      ctx.addIssue({ code: 'custom', path: ['minValue'], message: 'must not be greater than maxValue' });
    }
  });

export type BoardDefinition = z.infer<typeof boardDefinitionSchema>;

export function isValidBoardId(id: string): boolean {
  return BOARD_ID.test(id);
}

/** The fixed fields whose value differs between a stored board and a new definition. */
export function changedFixedFields(current: Board, next: BoardDefinition): string[] {
  return FIXED_FIELDS.filter((field) => {
    if (field === 'period') return specId(current.period) !== specId(next.period);
    if (field === 'subscore') return current.subscore?.order !== next.subscore?.order;
    if (field === 'league')
      return JSON.stringify(current.league && leagueOf({ league: current.league })) !== JSON.stringify(leagueOf(next));
    return current[field] !== next[field];
  });
}

/** The league as stored: startTier filled in, keys in one order (the fixed-field check compares it). */
export function leagueOf(def: Pick<BoardDefinition, 'league'>): League | null {
  if (!def.league) return null;
  const { tiers, bucketSize, promote, relegate, startTier } = def.league;
  return { tiers, bucketSize, promote, relegate, startTier: startTier ?? tiers[0]! };
}
