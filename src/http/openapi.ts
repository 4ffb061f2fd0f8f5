import { z } from 'zod';
import { boardDefinitionSchema } from '../domain/board.js';
import { BOARD_ID, IDEMPOTENCY_KEY, MEMBER_ID } from '../domain/ids.js';
import { eventBatchSchema, scoreEventSchema } from '../domain/event.js';
import type { Role } from '../services/api-keys.js';
import { followingSchema } from '../services/following-service.js';
import { reasonSchema, removalQuerySchema, restoreSchema } from '../services/moderation-service.js';
import { memberSchema } from '../services/member-profile-service.js';
import { bulkMembersSchema } from '../services/members-bulk-service.js';
import { memberEventsQuerySchema } from '../services/member-events-service.js';
import { memberSearchQuerySchema } from '../services/member-search-service.js';
import { playerTokenRequestSchema } from '../services/player-tokens.js';
import {
  notificationsQuerySchema,
  periodsQuerySchema,
  resultsQuerySchema,
} from '../services/period-results-service.js';
import { rebuildRequestSchema } from '../services/rebuild-service.js';
import { topStreamQuerySchema } from '../services/realtime/stream-query.js';
import { goalsQuerySchema } from '../services/goals-service.js';
import { cutoffsQuerySchema } from '../services/cutoffs-service.js';
import { statsQuerySchema } from '../services/stats-service.js';
import { entrantsQuerySchema } from '../services/entrants-service.js';
import { leagueQuerySchema } from '../services/league-service.js';
import { regionsQuerySchema } from '../services/regions-service.js';
import {
  aroundQuerySchema,
  followingQuerySchema,
  memberBoardsQuerySchema,
  scopeQuerySchema,
  standingsQuerySchema,
} from '../services/standings-service.js';
import { createKeySchema } from './routes/admin-key-routes.js';
import { eventKeyQuerySchema, intakeQuerySchema } from './routes/event-routes.js';
import * as answers from './schemas/responses.js';
import { LAUREL_VERSION } from '../version.js';

/** Request bodies, as components; converted with their input types (defaults make a field optional). */
const requestBodies = z.registry<{ id: string }>();
for (const [id, schema] of Object.entries({
  BoardDefinition: boardDefinitionSchema,
  ScoreEvent: scoreEventSchema,
  EventBatch: eventBatchSchema,
  MemberUpdate: memberSchema,
  FollowingUpdate: followingSchema,
  MemberBatch: bulkMembersSchema,
  PlayerTokenRequest: playerTokenRequestSchema,
  Reason: reasonSchema,
  RestoreReason: restoreSchema,
  KeyRequest: createKeySchema,
  RebuildRequest: rebuildRequestSchema,
})) {
  requestBodies.add(schema, { id });
}
const body = (id: string, required = true) => ({ required, content: { 'application/json': { schema: ref(id) } } });
const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const idOf = (schema: z.ZodType) => {
  const id = (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
  if (!id) throw new Error('answer schema without an id');
  return id;
};

const pathParams = {
  boardId: z.string().regex(BOARD_ID),
  memberId: z.string().regex(MEMBER_ID),
  idempotencyKey: z.string().regex(IDEMPOTENCY_KEY),
  periodKey: z.string().max(32),
  bucket: z.string().max(80).meta({ description: 'a league bucket, `<tier>-<n>`' }),
  rebuildId: z.uuid(),
  erasureId: z.uuid(),
  keyId: z.uuid(),
} as const;
type PathParam = keyof typeof pathParams;

const schemaOf = (schema: z.ZodType) => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
};

function parameters(path: string, query?: z.ZodObject) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as PathParam);
  const inPath = names.map((name) => ({ name, in: 'path', required: true, schema: schemaOf(pathParams[name]) }));
  const inQuery = Object.entries(query?.shape ?? {}).map(([name, field]) => {
    const schema = field as z.ZodType;
    return { name, in: 'query', required: !schema.safeParse(undefined).success, schema: schemaOf(schema) };
  });
  return [...inPath, ...inQuery];
}

type Access = 'none' | Role;

const ERROR_TEXT: Record<number, string> = {
  400: 'validation failed: `details` names each field at fault',
  401: 'no or bad API key',
  403: "the key lacks the role (a player token: a write, another role's route or another member's member route)",
  404: 'unknown board, period, category, region, member, event, rebuild, erasure or key',
  409: 'conflicts with the current state',
  413: 'body larger than 1 MB',
  415: 'body is not JSON',
  429: 'rate limited: retry after the Retry-After header (seconds)',
  503: 'a dependency is down; nothing was accepted: retry (`not_configured`: a setting this route needs is missing)',
};

interface Operation {
  operationId: string;
  tag: string;
  summary: string;
  access: Access;
  query?: z.ZodObject;
  body?: string;
  /** The body may be left out altogether. */
  bodyOptional?: true;
  ok: Record<
    number,
    { description: string; schema?: z.ZodType; text?: true; events?: Record<string, z.ZodType>; location?: string }
  >;
  /** Client errors beyond those every keyed route has (401, 403, 429, 503). */
  errors?: number[];
}

const json = (schema: z.ZodType, description: string) => ({ description, schema });

/** The `data` of each event a stream sends besides its own (docs/design/realtime.md): the end and a pause. */
const streamEnd = { closed: answers.streamClosedSchema, unavailable: answers.errorSchema };

/** Every route Laurel serves, keyed `METHOD /path`. */
const OPERATIONS: Record<string, Operation> = {
  'put /v1/boards/{boardId}': {
    operationId: 'putBoard',
    tag: 'boards',
    summary: 'Create (201) or replace (200) a board; omitted fields take their defaults',
    access: 'admin',
    body: 'BoardDefinition',
    ok: {
      200: json(answers.boardViewSchema, 'replaced'),
      201: { ...json(answers.boardViewSchema, 'created'), location: 'the board' },
    },
    errors: [400, 409, 413, 415],
  },
  'get /v1/boards': {
    operationId: 'listBoards',
    tag: 'boards',
    summary: 'Board definitions with their current period',
    access: 'read',
    ok: { 200: json(answers.boardListSchema, 'the boards') },
  },
  'get /v1/boards/{boardId}': {
    operationId: 'getBoard',
    tag: 'boards',
    summary: 'One board definition with its current period',
    access: 'read',
    ok: { 200: json(answers.boardViewSchema, 'the board') },
    errors: [404],
  },
  'post /v1/events': {
    operationId: 'postEvents',
    tag: 'events',
    summary: 'Post one event or a batch of 1-1000; the whole batch is validated first',
    access: 'ingest',
    query: intakeQuerySchema,
    body: 'ScoreEvents',
    ok: {
      200: json(answers.eventResultsSchema, 'with wait=true: the per-event results, once applied'),
      202: { ...json(answers.acceptedSchema, 'accepted: the batch is queued'), location: "a single event's status" },
    },
    errors: [400, 413, 415],
  },
  'get /v1/events/{idempotencyKey}': {
    operationId: 'getEvent',
    tag: 'events',
    summary: "Status of a board's event: pending, applied, voided or rejected",
    access: 'ingest',
    query: eventKeyQuerySchema,
    ok: { 200: json(answers.eventStatusSchema, 'the event') },
    errors: [400, 404, 409],
  },
  'post /v1/events/{idempotencyKey}/void': {
    operationId: 'voidEvent',
    tag: 'events',
    summary: "Void an event: its member's aggregates are recomputed from the rest",
    access: 'admin',
    query: eventKeyQuerySchema,
    body: 'Reason',
    ok: { 200: json(answers.voidedEventSchema, 'voided') },
    errors: [400, 404, 409, 413, 415],
  },
  'post /v1/boards/{boardId}/entrants/{memberId}': {
    operationId: 'enterMember',
    tag: 'boards',
    summary:
      'Enter a member into the current period of a maxMembers board without a score (201; 200 if already entered)',
    access: 'ingest',
    ok: { 200: json(answers.entrantSchema, 'already an entrant'), 201: json(answers.entrantSchema, 'entered') },
    errors: [400, 404, 409],
  },
  'get /v1/boards/{boardId}/entrants': {
    operationId: 'listEntrants',
    tag: 'boards',
    summary: "A period's entrants of a maxMembers board, in the order they entered",
    access: 'read',
    query: entrantsQuerySchema,
    ok: { 200: json(answers.entrantsPageSchema, 'a page of entrants') },
    errors: [400, 404, 409],
  },
  'get /v1/boards/{boardId}/standings/{memberId}/league': {
    operationId: 'getMemberLeague',
    tag: 'standings',
    summary: "The member's league bucket ranked, with zones; bucket and rank null before their first event",
    access: 'read',
    query: leagueQuerySchema,
    ok: { 200: json(answers.leagueStandingsSchema, 'the bucket') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/league/{bucket}': {
    operationId: 'getLeagueBucket',
    tag: 'standings',
    summary: 'A league bucket (`<tier>-<n>`) ranked, with zones',
    access: 'read',
    query: leagueQuerySchema,
    ok: { 200: json(answers.leagueStandingsSchema, 'the bucket') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings': {
    operationId: 'getStandings',
    tag: 'standings',
    summary: "A page of standings; or, with `members`, those members' entries; `member` adds `me`",
    access: 'read',
    query: standingsQuerySchema,
    ok: { 200: json(answers.standingsPageSchema, 'the page') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings/{memberId}': {
    operationId: 'getMemberStanding',
    tag: 'standings',
    summary: "A member's rank, score and percentile; rank null without a score",
    access: 'read',
    query: scopeQuerySchema,
    ok: { 200: json(answers.memberStandingSchema, 'the standing') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings/{memberId}/around': {
    operationId: 'getAroundMember',
    tag: 'standings',
    summary: 'The member and up to `radius` neighbours each side',
    access: 'read',
    query: aroundQuerySchema,
    ok: { 200: json(answers.aroundSchema, 'the neighbourhood') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings/{memberId}/following': {
    operationId: 'getFollowingStandings',
    tag: 'standings',
    summary: 'Ranking among the member and those they follow',
    access: 'read',
    query: followingQuerySchema,
    ok: { 200: json(answers.followingStandingsSchema, 'the group ranking') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings/{memberId}/goals': {
    operationId: 'getMemberGoals',
    tag: 'standings',
    summary: 'What it takes to move up: the entry above, followed members, award tiers, promotion',
    access: 'read',
    query: goalsQuerySchema,
    ok: { 200: json(answers.memberGoalsSchema, 'the goals') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/cutoffs': {
    operationId: 'getCutoffs',
    tag: 'standings',
    summary: 'The score at given positions and at the top p% of a scope',
    access: 'read',
    query: cutoffsQuerySchema,
    ok: { 200: json(answers.cutoffsSchema, 'the cutoffs') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings/stream': {
    operationId: 'streamTop',
    tag: 'standings',
    summary: 'Server-Sent Events: the top entries at once, then whenever they change (at most 1/s)',
    access: 'read',
    query: topStreamQuerySchema,
    ok: {
      200: {
        description: '`event: top` messages, a `: keepalive` comment every 15 s, `event: closed` at period end',
        events: { top: answers.standingsPageSchema, ...streamEnd },
      },
    },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/standings/{memberId}/stream': {
    operationId: 'streamMemberStanding',
    tag: 'standings',
    summary: "Server-Sent Events: the member's standing at once, then whenever it changes (at most 1/s)",
    access: 'read',
    query: scopeQuerySchema,
    ok: {
      200: {
        description: '`event: standing` messages, a `: keepalive` comment every 15 s, `event: closed` at period end',
        events: { standing: answers.memberStandingSchema, ...streamEnd },
      },
    },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/periods': {
    operationId: 'listPeriods',
    tag: 'periods',
    summary: 'Periods of a board and their state, newest first',
    access: 'read',
    query: periodsQuerySchema,
    ok: { 200: json(answers.periodListSchema, 'the periods') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/regions': {
    operationId: 'listRegions',
    tag: 'standings',
    summary: 'The regions of the members ranked in a period, sorted: the region scopes with someone in them',
    access: 'read',
    query: regionsQuerySchema,
    ok: { 200: json(answers.boardRegionsSchema, 'the regions') },
    errors: [400, 404],
  },
  'get /v1/boards/{boardId}/periods/{periodKey}/results': {
    operationId: 'getPeriodResults',
    tag: 'periods',
    summary: 'Final standings of a closed period, with the awards of the scope',
    access: 'read',
    query: resultsQuerySchema,
    ok: { 200: json(answers.periodResultsSchema, 'the final standings') },
    errors: [400, 404, 409],
  },
  'post /v1/boards/{boardId}/periods/{periodKey}/close': {
    operationId: 'closePeriodNow',
    tag: 'periods',
    summary:
      'Close an open period now: it ends at this moment, without grace, and closes as at its end (results, awards, reports, webhooks); on an all board the window ends too',
    access: 'admin',
    body: 'Reason',
    ok: { 202: json(answers.periodCloseSchema, 'accepted; the period closes within moments') },
    errors: [400, 404, 409, 413, 415],
  },
  'delete /v1/boards/{boardId}/members/{memberId}': {
    operationId: 'removeMemberFromPeriod',
    tag: 'members',
    summary:
      'Remove a member from one board period: every applied event of theirs there is voided with the reason; other boards and periods keep theirs',
    access: 'admin',
    query: removalQuerySchema,
    body: 'Reason',
    ok: { 200: json(answers.memberRemovalSchema, 'the events voided') },
    errors: [400, 404, 409, 413, 415],
  },
  'put /v1/members': {
    operationId: 'putMembers',
    tag: 'members',
    summary: 'Profiles and follow lists of up to 1000 members, in one transaction',
    access: 'ingest',
    body: 'MemberBatch',
    ok: { 200: json(answers.membersUpdatedSchema, 'the batch is stored') },
    errors: [400, 413, 415],
  },
  'get /v1/members': {
    operationId: 'searchMembers',
    tag: 'members',
    summary: 'Members whose id starts with q, then those whose display name starts with q in any case',
    access: 'admin',
    query: memberSearchQuerySchema,
    ok: { 200: json(answers.memberSearchSchema, 'at most `limit` members, each once') },
    errors: [400],
  },
  'put /v1/members/{memberId}': {
    operationId: 'putMember',
    tag: 'members',
    summary: 'Display name and region (omitted = unchanged, null = cleared)',
    access: 'ingest',
    body: 'MemberUpdate',
    ok: { 200: json(answers.memberViewSchema, 'the member') },
    errors: [400, 413, 415],
  },
  'get /v1/members/{memberId}': {
    operationId: 'getMember',
    tag: 'members',
    summary: 'Profile and exclusion state; the exclusion history for admin keys',
    access: 'read',
    ok: { 200: json(answers.memberViewSchema, 'the member') },
    errors: [400, 404],
  },
  'put /v1/members/{memberId}/following': {
    operationId: 'putFollowing',
    tag: 'members',
    summary: 'Replace the list of members this member follows',
    access: 'ingest',
    body: 'FollowingUpdate',
    ok: { 200: json(answers.followingListSchema, 'the list as stored') },
    errors: [400, 413, 415],
  },
  'post /v1/player-tokens': {
    operationId: 'createPlayerToken',
    tag: 'members',
    summary: "A player token: a game client's read access as its member",
    access: 'ingest',
    body: 'PlayerTokenRequest',
    ok: { 201: json(answers.playerTokenSchema, 'the token, signed with PLAYER_TOKEN_SECRET') },
    errors: [400, 413, 415],
  },
  'post /v1/members/{memberId}/exclusion': {
    operationId: 'excludeMember',
    tag: 'members',
    summary: 'Exclude a member from every standing',
    access: 'admin',
    body: 'Reason',
    ok: { 200: json(answers.memberViewSchema, 'the member') },
    errors: [400, 404, 413, 415],
  },
  'delete /v1/members/{memberId}/exclusion': {
    operationId: 'restoreMember',
    tag: 'members',
    summary: 'Restore an excluded member with all their points, optionally with a reason',
    access: 'admin',
    body: 'RestoreReason',
    bodyOptional: true,
    ok: { 200: json(answers.memberViewSchema, 'the member') },
    errors: [400, 404, 413, 415],
  },
  'get /v1/members/{memberId}/leagues': {
    operationId: 'getMemberLeagues',
    tag: 'members',
    summary: 'Per league board, the tier the member plays in next',
    access: 'read',
    ok: { 200: json(answers.memberLeaguesSchema, 'the tiers') },
    errors: [400],
  },
  'get /v1/members/{memberId}/standings': {
    operationId: 'getMemberStandings',
    tag: 'members',
    summary: "The member's (all, world) placement on every board",
    access: 'read',
    query: memberBoardsQuerySchema,
    ok: { 200: json(answers.memberBoardsSchema, 'one standing per board') },
    errors: [400, 404],
  },
  'get /v1/members/{memberId}/awards': {
    operationId: 'getMemberAwards',
    tag: 'members',
    summary: 'Awards won',
    access: 'read',
    ok: { 200: json(answers.memberAwardsSchema, 'the awards') },
    errors: [400],
  },
  'get /v1/members/{memberId}/notifications': {
    operationId: 'getMemberNotifications',
    tag: 'members',
    summary: 'Period reports, newest first',
    access: 'read',
    query: notificationsQuerySchema,
    ok: { 200: json(answers.notificationsSchema, 'the notifications') },
    errors: [400],
  },
  'delete /v1/members/{memberId}': {
    operationId: 'eraseMember',
    tag: 'members',
    summary: 'Erase a member (right to be forgotten): queued, tracked at the Location',
    access: 'admin',
    ok: { 202: { ...json(answers.erasureQueuedSchema, 'queued'), location: 'the erasure' } },
    errors: [400, 404],
  },
  'get /v1/members/{memberId}/events': {
    operationId: 'getMemberEvents',
    tag: 'members',
    summary: "The member's events (applied, voided, rejected), newest occurredAt first, paged by a stable cursor",
    access: 'admin',
    query: memberEventsQuerySchema,
    ok: { 200: json(answers.memberEventsSchema, 'a page of events') },
    errors: [400, 404],
  },
  'post /v1/admin/rebuilds': {
    operationId: 'requestRebuild',
    tag: 'operations',
    summary: 'Rebuild leaderboards from Postgres (or from the ledger with fromEvents)',
    access: 'admin',
    body: 'RebuildRequest',
    ok: { 202: { ...json(answers.rebuildQueuedSchema, 'queued'), location: 'the rebuild' } },
    errors: [400, 404, 409, 413, 415],
  },
  'get /v1/admin/erasures/{erasureId}': {
    operationId: 'getErasure',
    tag: 'operations',
    summary: 'State of an erasure',
    access: 'admin',
    ok: { 200: json(answers.erasureStatusSchema, 'the erasure') },
    errors: [404],
  },
  'get /v1/admin/rebuilds/{rebuildId}': {
    operationId: 'getRebuild',
    tag: 'operations',
    summary: 'Rebuild state, progress, per-scope counts and durations',
    access: 'admin',
    ok: { 200: json(answers.rebuildStatusSchema, 'the rebuild') },
    errors: [404],
  },
  'post /v1/admin/keys': {
    operationId: 'createKey',
    tag: 'operations',
    summary: 'Create an API key (shown once)',
    access: 'admin',
    body: 'KeyRequest',
    ok: { 201: json(answers.createdKeySchema, 'created') },
    errors: [400, 413, 415],
  },
  'delete /v1/admin/keys/{keyId}': {
    operationId: 'revokeKey',
    tag: 'operations',
    summary: 'Revoke an API key',
    access: 'admin',
    ok: { 204: { description: 'revoked' } },
    errors: [404],
  },
  'get /v1/admin/stats': {
    operationId: 'getStats',
    tag: 'operations',
    summary: 'Hourly rollups per board and period',
    access: 'admin',
    query: statsQuerySchema,
    ok: { 200: json(answers.statsSchema, 'the rollups') },
    errors: [400],
  },
  'get /metrics': {
    operationId: 'getMetrics',
    tag: 'probes',
    summary: 'Prometheus metrics (text exposition format), on web and worker-only processes',
    access: 'metrics',
    ok: { 200: { description: 'Prometheus text', text: true } },
  },
  'get /healthz': {
    operationId: 'getHealth',
    tag: 'probes',
    summary: 'Liveness',
    access: 'none',
    ok: { 200: json(answers.healthSchema, 'alive') },
  },
  'get /readyz': {
    operationId: 'getReadiness',
    tag: 'probes',
    summary: 'Readiness of Postgres, both Redis and migrations',
    access: 'none',
    ok: {
      200: json(answers.readinessSchema, 'ready'),
      503: json(answers.readinessSchema, 'a part is down: `failing` names it'),
    },
  },
};

const TAGS = [
  { name: 'boards', description: 'Board definitions' },
  { name: 'events', description: 'Score intake and the ledger' },
  { name: 'standings', description: 'Live rankings' },
  { name: 'periods', description: 'Periods and final results' },
  { name: 'members', description: 'Profiles, follows, awards, moderation' },
  { name: 'operations', description: 'Keys, rebuilds, rollups (admin)' },
  { name: 'probes', description: 'Health and metrics' },
];

function security(access: Access) {
  if (access === 'none') return [];
  // Read routes take player tokens too, and no key where the deployment sets PUBLIC_READS=true.
  return access === 'read' ? [{ bearer: [] }, { playerToken: [] }, {}] : [{ bearer: [] }];
}

function responses(op: Operation) {
  const out: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(op.ok)) {
    const content = answer.text
      ? { 'text/plain': { schema: { type: 'string' } } }
      : answer.events
        ? { 'text/event-stream': eventStream(answer.events) }
        : answer.schema
          ? { 'application/json': { schema: ref(idOf(answer.schema)) } }
          : undefined;
    const headers = answer.location
      ? { Location: { description: `URL of ${answer.location}`, schema: { type: 'string' } } }
      : undefined;
    out[status] = { description: answer.description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
  }
  const statuses = [...(op.errors ?? []), ...(op.access === 'none' ? [] : [401, 403, 429, 503])];
  for (const status of [...new Set(statuses)].sort()) {
    out[status] = { $ref: `#/components/responses/E${status}` };
  }
  return out;
}

/**
 * An event stream's media type: OpenAPI 3.1 has no schema for single events, so the JSON
 * `data` of each event name is given in `x-event-data` (the contract test validates with it).
 */
function eventStream(events: Record<string, z.ZodType>) {
  const names = Object.keys(events)
    .map((e) => `\`${e}\``)
    .join(', ');
  return {
    schema: { type: 'string', description: `Server-Sent Events (${names}), each \`data\` one JSON line` },
    'x-event-data': Object.fromEntries(Object.entries(events).map(([name, schema]) => [name, ref(idOf(schema))])),
  };
}

function components() {
  const strip = (schemas: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(schemas).map(([id, schema]) => {
        const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
        return [id, rest];
      }),
    );
  const uri = (id: string) => `#/components/schemas/${id}`;
  const input = z.toJSONSchema(requestBodies, { io: 'input', uri, unrepresentable: 'any' }).schemas;
  const output = z.toJSONSchema(z.globalRegistry, { io: 'output', uri, unrepresentable: 'any' }).schemas;
  return {
    schemas: {
      ...strip(output),
      ...strip(input),
      ScoreEvents: { oneOf: [ref('ScoreEvent'), ref('EventBatch')] },
    },
    responses: Object.fromEntries(
      Object.entries(ERROR_TEXT).map(([status, description]) => [
        `E${status}`,
        { description, content: { 'application/json': { schema: ref('Error') } } },
      ]),
    ),
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key: ADMIN_API_KEY, or one created with POST /v1/admin/keys',
      },
      playerToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          "A player token (HS256, iss laurel, sub the member) from POST /v1/player-tokens or the studio's backend: read routes, and of the member routes only its own member's",
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document, generated from the zod schemas that validate requests and the
 * schemas of the answers (schemas/responses.ts); the contract test checks every route's
 * real answers against it.
 */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, op] of Object.entries(OPERATIONS)) {
    const [method, path] = key.split(' ') as [string, string];
    (paths[path] ??= {})[method] = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      description:
        op.access === 'none'
          ? 'No key needed.'
          : `Role: ${op.access}${op.access === 'read' ? ' (or a player token; none with PUBLIC_READS=true)' : ''}${op.access === 'admin' ? '' : ' or admin'}.`,
      security: security(op.access),
      parameters: parameters(path, op.query),
      ...(op.body ? { requestBody: body(op.body, !op.bodyOptional) } : {}),
      responses: responses(op),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Laurel',
      version: LAUREL_VERSION,
      description: 'Leaderboards for games: score intake, standings, periods, rebuilds.',
      // The LICENSE file's terms, as an SPDX identifier.
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative: the Laurel that serves the document (Swagger UI's calls go there too).
    servers: [{ url: '/', description: 'the Laurel serving this document' }],
    tags: TAGS,
    paths,
    components: components(),
  };
}
