import type { IRouter } from 'express';
import { z } from 'zod';
import { isSafeText, UNSAFE_TEXT_MESSAGE } from '../../domain/ids.js';
import type { AppContext } from '../../context.js';
import { createApiKey, revokeApiKey, ROLES, type ApiKeyVerifier } from '../../services/api-keys.js';
import { param } from '../params.js';
import { principalOf, requireRole } from '../auth.js';
import { NotFound } from '../../domain/errors.js';
import { parseOrThrow } from '../../domain/validation.js';

export const createKeySchema = z
  .object({
    name: z.string().min(1).max(100).refine(isSafeText, UNSAFE_TEXT_MESSAGE),
    role: z.enum(ROLES),
  })
  .strict();

export function adminKeyRoutes(router: IRouter, ctx: AppContext, verifier: ApiKeyVerifier): void {
  const admin = requireRole('admin');

  router.post('/v1/admin/keys', admin, async (req, res) => {
    const body = parseOrThrow(createKeySchema, req.body, 'key request');
    const { key, record } = await createApiKey(ctx.db, body.name, body.role);
    ctx.log.info(
      { keyId: record.id, keyName: record.name, role: record.role, by: principalOf(res)?.name },
      'api key created',
    );
    res
      .status(201)
      .json({ id: record.id, name: record.name, role: record.role, key, createdAt: record.createdAt.toISOString() });
  });
  router.delete('/v1/admin/keys/:keyId', admin, async (req, res) => {
    const id = param(req, 'keyId');
    if (!(await revokeApiKey(ctx.db, id))) throw new NotFound(`no active key with id "${id}"`);
    verifier.forgetAll();
    ctx.log.info({ keyId: id, by: principalOf(res)?.name }, 'api key revoked');
    res.status(204).end();
  });
}
