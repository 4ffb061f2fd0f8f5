import { OpenAPIRegistry, OpenApiGeneratorV3, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { boardDefinitionSchema } from '../domain/board.js';
import { scoreEventSchema } from '../domain/event.js';
import { pageQuerySchema, scopeQuerySchema } from '../services/standings-service.js';
import { rebuildRequestSchema } from '../services/rebuild-service.js';
import { topStreamQuerySchema } from '../services/realtime/stream-query.js';

extendZodWithOpenApi(z);

const errorSchema = z.object({
  error: z.string(),
  message: z.string(),
  details: z.array(z.object({ index: z.number().int().optional(), path: z.string(), message: z.string() })).optional(),
});

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const anyJson = (description: string) => json(z.record(z.string(), z.unknown()), description);
const eventStream = (description: string) => ({ description, content: { 'text/event-stream': { schema: z.string() } } });
const errors = {
  400: json(errorSchema, 'validation failed: `details` names each field at fault'),
  401: json(errorSchema, 'no or bad API key'),
  403: json(errorSchema, 'the key lacks the role'),
  404: json(errorSchema, 'unknown board, period, category, region, member or event'),
  429: json(errorSchema, 'rate limited: retry after the Retry-After header (seconds)'),
  503: json(errorSchema, 'a dependency is down; nothing was accepted'),
};

type Method = 'get' | 'put' | 'post' | 'delete';

/**
 * The OpenAPI 3 document, generated from the same zod schemas that validate requests, so
 * the published contract cannot drift from what the service accepts.
 */
export function openApiDocument(): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  const boardId = z.object({ boardId: z.string() });
  const memberPath = z.object({ boardId: z.string(), memberId: z.string() });
  const route = (
    method: Method,
    path: string,
    summary: string,
    role: string,
    request: { params?: z.ZodObject; query?: z.ZodObject; body?: z.ZodType } = {},
    ok: Record<number, ReturnType<typeof anyJson> | ReturnType<typeof eventStream>> = { 200: anyJson('OK') },
  ) =>
    registry.registerPath({
      method,
      path,
      summary,
      description: `Role: ${role}.`,
      security: [{ bearer: [] }],
      request: {
        ...(request.params ? { params: request.params } : {}),
        ...(request.query ? { query: request.query } : {}),
        ...(request.body ? { body: { content: { 'application/json': { schema: request.body } } } } : {}),
      },
      responses: { ...ok, ...errors },
    });

  const batch = z.union([scoreEventSchema, z.object({ events: z.array(scoreEventSchema).min(1).max(1000) })]);
  route('put', '/v1/boards/{boardId}', 'Create (201) or replace (200) a board', 'admin', { params: boardId, body: boardDefinitionSchema }, {
    200: anyJson('updated'),
    201: anyJson('created'),
    409: json(errorSchema, 'a fixed field changed on a board with events'),
  });
  route('get', '/v1/boards', 'Board definitions with their current period', 'read');
  route('get', '/v1/boards/{boardId}', 'One board definition', 'read', { params: boardId });
  route('post', '/v1/events', 'Post one event or a batch of 1-1000', 'ingest', { body: batch, query: z.object({ wait: z.enum(['true', 'false']).optional() }) }, {
    200: anyJson('with wait=true: per-event results'),
    202: anyJson('accepted: the batch is queued'),
    413: json(errorSchema, 'body larger than 1 MB'),
  });
  route('get', '/v1/events/{idempotencyKey}', 'Status of an event: pending, applied, voided or rejected', 'ingest', {
    params: z.object({ idempotencyKey: z.string() }),
  });
  route('post', '/v1/events/{idempotencyKey}/void', 'Void an event', 'admin', {
    params: z.object({ idempotencyKey: z.string() }),
    body: z.object({ reason: z.string() }),
  });
  route('get', '/v1/boards/{boardId}/standings', 'A page of standings', 'read', { params: boardId, query: pageQuerySchema });
  route('get', '/v1/boards/{boardId}/standings/{memberId}', "A member's rank", 'read', { params: memberPath, query: scopeQuerySchema });
  route('get', '/v1/boards/{boardId}/standings/{memberId}/around', 'The member and their neighbours', 'read', {
    params: memberPath,
    query: scopeQuerySchema.extend({ radius: z.number().int().min(0).max(50).optional() }),
  });
  route('get', '/v1/boards/{boardId}/standings/{memberId}/following', 'Ranking among the member and those they follow', 'read', {
    params: memberPath,
    query: scopeQuerySchema.extend({ limit: z.number().int().optional() }),
  });
  route('get', '/v1/boards/{boardId}/standings/stream', 'Server-Sent Events: the top entries, at once and on change (at most 1/s)', 'read', {
    params: boardId,
    query: topStreamQuerySchema,
  }, { 200: eventStream('`event: top` messages, `: keepalive` comments, `event: closed` at period end') });
  route('get', '/v1/boards/{boardId}/standings/{memberId}/stream', "Server-Sent Events: the member's standing, at once and on change (at most 1/s)", 'read', {
    params: memberPath,
    query: scopeQuerySchema,
  }, { 200: eventStream('`event: standing` messages, `: keepalive` comments, `event: closed` at period end') });
  route('get', '/v1/boards/{boardId}/periods', 'Periods and their state', 'read', { params: boardId });
  route('get', '/v1/boards/{boardId}/periods/{key}/results', 'Final standings of a closed period', 'read', {
    params: z.object({ boardId: z.string(), key: z.string() }),
    query: pageQuerySchema.omit({ period: true }),
  });
  const member = z.object({ memberId: z.string() });
  route('put', '/v1/members/{memberId}', 'Display name and region', 'ingest', {
    params: member,
    body: z.object({ displayName: z.string().nullable().optional(), region: z.string().nullable().optional() }),
  });
  route('get', '/v1/members/{memberId}', 'Profile and exclusion history', 'read', { params: member });
  route('put', '/v1/members/{memberId}/following', 'Replace the follow list', 'ingest', {
    params: member,
    body: z.object({ memberIds: z.array(z.string()).max(1000) }),
  });
  route('post', '/v1/members/{memberId}/exclusion', 'Exclude a member', 'admin', { params: member, body: z.object({ reason: z.string() }) });
  route('delete', '/v1/members/{memberId}/exclusion', 'Restore an excluded member', 'admin', { params: member });
  route('get', '/v1/members/{memberId}/standings', "The member's placement on every board", 'read', { params: member });
  route('get', '/v1/members/{memberId}/awards', 'Awards won', 'read', { params: member });
  route('get', '/v1/members/{memberId}/notifications', 'Period reports', 'read', { params: member });
  route('post', '/v1/admin/rebuilds', 'Rebuild leaderboards from Postgres', 'admin', { body: rebuildRequestSchema }, { 202: anyJson('queued') });
  route('get', '/v1/admin/rebuilds/{rebuildId}', 'Rebuild progress', 'admin', { params: z.object({ rebuildId: z.string() }) });
  route('post', '/v1/admin/keys', 'Create an API key (shown once)', 'admin', {
    body: z.object({ name: z.string(), role: z.enum(['ingest', 'read', 'admin']) }),
  }, { 201: anyJson('created') });
  route('delete', '/v1/admin/keys/{keyId}', 'Revoke an API key', 'admin', { params: z.object({ keyId: z.string() }) }, { 204: anyJson('revoked') });
  route('get', '/v1/admin/stats', 'Hourly rollups', 'admin', {
    query: z.object({ board: z.string().optional(), from: z.string().optional(), to: z.string().optional() }),
  });
  route('get', '/metrics', 'Prometheus metrics', 'admin');
  route('get', '/healthz', 'Liveness', 'none');
  route('get', '/readyz', 'Readiness of Postgres, Redis and migrations', 'none', {}, { 200: anyJson('ready'), 503: json(z.object({ status: z.string(), failing: z.array(z.string()) }), 'a part is down') });

  return new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: { title: 'Laurel', version: '1.0.0', description: 'Leaderboards for games: score intake, standings, periods, rebuilds.' },
  });
}
