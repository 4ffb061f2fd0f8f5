import type { IRouter } from 'express';
import type { AppContext } from '../../context.js';
import { putFollowing } from '../../services/following-service.js';
import { memberProfile, putMember } from '../../services/member-profile-service.js';
import { putMembers } from '../../services/members-bulk-service.js';
import { excludeMember, restoreMember } from '../../services/moderation-service.js';
import { requestErasure } from '../../services/erasure-service.js';
import { memberEventsPage } from '../../services/member-events-service.js';
import { searchMembers } from '../../services/member-search-service.js';
import { awardsOf, notificationsOf } from '../../services/period-results-service.js';
import { memberAcrossBoards } from '../../services/standings-service.js';
import { param } from '../params.js';
import { principalOf, requireRole } from '../auth.js';
import { replyRead } from '../read-reply.js';

export function memberRoutes(router: IRouter, ctx: AppContext): void {
  const ingest = requireRole('ingest');
  const read = requireRole('read', { publicReads: ctx.env.PUBLIC_READS });
  const admin = requireRole('admin');
  const cors = ctx.env.CORS_ORIGINS;

  router.put('/v1/members', ingest, async (req, res) => {
    res.json(await putMembers(ctx, req.body));
  });
  router.get('/v1/members', admin, async (req, res) => {
    res.json(await searchMembers(ctx, req.query));
  });
  router.get('/v1/members/:memberId/standings', read, async (req, res) => {
    replyRead(res, cors, await memberAcrossBoards(ctx, param(req, 'memberId'), req.query));
  });
  router.put('/v1/members/:memberId', ingest, async (req, res) => {
    res.json(await putMember(ctx, param(req, 'memberId'), req.body));
  });
  router.delete('/v1/members/:memberId', admin, async (req, res) => {
    const { erasureId } = await requestErasure(ctx, param(req, 'memberId'));
    res.location(`/v1/admin/erasures/${erasureId}`).status(202).json({ erasureId });
  });
  router.get('/v1/members/:memberId', read, async (req, res) => {
    const principal = principalOf(res);
    replyRead(
      res,
      cors,
      await memberProfile(ctx, param(req, 'memberId'), { admin: principal?.role === 'admin', anonymous: !principal }),
    );
  });
  router.put('/v1/members/:memberId/following', ingest, async (req, res) => {
    res.json(await putFollowing(ctx, param(req, 'memberId'), req.body));
  });
  router.post('/v1/members/:memberId/exclusion', admin, async (req, res) => {
    res.json(await excludeMember(ctx, param(req, 'memberId'), req.body, principalOf(res)!.name));
  });
  router.delete('/v1/members/:memberId/exclusion', admin, async (req, res) => {
    res.json(await restoreMember(ctx, param(req, 'memberId'), req.body, principalOf(res)!.name));
  });
  router.get('/v1/members/:memberId/awards', read, async (req, res) => {
    replyRead(res, cors, await awardsOf(ctx, param(req, 'memberId')));
  });
  router.get('/v1/members/:memberId/notifications', read, async (req, res) => {
    replyRead(res, cors, await notificationsOf(ctx, param(req, 'memberId'), req.query));
  });
  router.get('/v1/members/:memberId/events', admin, async (req, res) => {
    res.json(await memberEventsPage(ctx, param(req, 'memberId'), req.query));
  });
}
