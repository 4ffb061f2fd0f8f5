import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.js';
import type { ApiKeyVerifier, Principal, Role } from '../../services/api-keys.js';
import { acceptEvents, type ResultListener } from '../../services/intake-service.js';
import { aroundMember, followingStandings, memberAcrossBoards, memberStanding, standingsPage } from '../../services/standings-service.js';
import { parseOrThrow } from '../../domain/validation.js';
import { setReadHeaders, type CachePolicy, type CorsPolicy } from '../answer-headers.js';
import { principalOf, requireRole } from '../auth.js';
import { aboutClosedPeriod } from '../read-reply.js';
import { intakeQuerySchema } from './event-routes.js';

/** What a hot route gets: the same facts whether Express or the door (`door.ts`) serves it. */
export interface HotCall {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  principal: Principal | undefined;
}

export interface HotAnswer {
  status: number;
  body: unknown;
  /** A read's cache lifetime (read headers); absent: the `no-store` every answer starts with. */
  cache?: Exclude<CachePolicy, 'none'>;
  location?: string;
}

/**
 * The routes most requests go to: the standings reads and intake. Each is declared once
 * here and served by both front ends: the door answers them on node's request and response
 * (`door.ts`), and Express holds them too (`hotRouter`), so the router lists them for the
 * 405 answers, the security and contract tests, and the door can always be compared with it.
 */
export interface HotRoute {
  method: 'GET' | 'POST';
  /** Express' pattern: the door matches with the router's own layer of it. */
  path: string;
  role: Role;
  answer(call: HotCall): Promise<HotAnswer>;
}

/** A standings answer: final once its period is closed, live otherwise. */
const standing = (body: { period: { state: string } }): HotAnswer => ({ status: 200, body, cache: aboutClosedPeriod(body) ? 'final' : 'live' });

export function hotRoutes(ctx: AppContext, listener: ResultListener): HotRoute[] {
  return [
    {
      method: 'POST',
      path: '/v1/events',
      role: 'ingest',
      async answer({ query, body }) {
        const { wait } = parseOrThrow(intakeQuerySchema, query, 'query');
        const answer = await acceptEvents(ctx, body, { wait: wait === 'true', listener });
        // A single event has a status resource of its own; a batch has none. (encodeURIComponent
        // leaves nothing Express' `res.location` would encode again.)
        const single = body as { idempotencyKey?: unknown } | undefined;
        const own = answer.status === 202 && typeof single?.idempotencyKey === 'string';
        return { ...answer, ...(own ? { location: `/v1/events/${encodeURIComponent(single.idempotencyKey as string)}` } : {}) };
      },
    },
    {
      method: 'GET',
      path: '/v1/boards/:boardId/standings',
      role: 'read',
      answer: async ({ params, query }) => standing(await standingsPage(ctx, params.boardId!, query)),
    },
    {
      method: 'GET',
      path: '/v1/boards/:boardId/standings/:memberId',
      role: 'read',
      answer: async ({ params, query }) => standing(await memberStanding(ctx, params.boardId!, params.memberId!, query)),
    },
    {
      method: 'GET',
      path: '/v1/boards/:boardId/standings/:memberId/around',
      role: 'read',
      answer: async ({ params, query }) => standing(await aroundMember(ctx, params.boardId!, params.memberId!, query)),
    },
    {
      method: 'GET',
      path: '/v1/boards/:boardId/standings/:memberId/following',
      role: 'read',
      answer: async ({ params, query }) => standing(await followingStandings(ctx, params.boardId!, params.memberId!, query)),
    },
    {
      method: 'GET',
      path: '/v1/members/:memberId/standings',
      role: 'read',
      answer: async ({ params, query }) => ({ status: 200, body: await memberAcrossBoards(ctx, params.memberId!, query), cache: 'live' }),
    },
  ];
}

/** The options of `requireRole` / `checkRole` for a route: PUBLIC_READS opens the read ones. */
export const roleOptions = (ctx: AppContext, route: HotRoute) => ({ publicReads: route.role === 'read' && ctx.env.PUBLIC_READS });

/** The hot routes on Express. */
export function hotRouter(ctx: AppContext, verifier: ApiKeyVerifier, routes: readonly HotRoute[], cors: CorsPolicy): Router {
  const router = Router();
  for (const route of routes) {
    const handle = async (req: Request, res: Response) => {
      const answer = await route.answer({ params: req.params as Record<string, string>, query: req.query, body: req.body, principal: principalOf(res) });
      if (answer.location) res.location(answer.location);
      if (answer.cache) setReadHeaders(res, answer.cache, cors);
      res.status(answer.status).json(answer.body);
    };
    const guard = requireRole(verifier, route.role, roleOptions(ctx, route));
    if (route.method === 'GET') router.get(route.path, guard, handle);
    else router.post(route.path, guard, handle);
  }
  return router;
}
