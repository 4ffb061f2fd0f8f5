import type { RequestHandler, Response } from 'express';
import { HttpError } from './errors.js';
import { roleAllows, type ApiKeyVerifier, type Principal, type Role } from '../services/api-keys.js';

export function principalOf(res: Response): Principal | undefined {
  return res.locals.principal as Principal | undefined;
}

/**
 * Requires a bearer key with the given role (admin may do everything). With
 * `publicReads`, read routes need no key at all.
 */
export function requireRole(verifier: ApiKeyVerifier, required: Role, options: { publicReads?: boolean } = {}): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    if (!header) {
      if (required === 'read' && options.publicReads) return next();
      throw new HttpError(401, 'unauthorized', 'missing API key: send Authorization: Bearer <key>');
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new HttpError(401, 'unauthorized', 'malformed Authorization header: expected Bearer <key>');
    const principal = await verifier.verify(match[1]!);
    if (!principal) throw new HttpError(401, 'unauthorized', 'unknown or revoked API key');
    res.locals.principal = principal;
    if (!roleAllows(principal.role, required)) {
      throw new HttpError(403, 'forbidden', `this route needs the ${required} role; the key "${principal.name}" has ${principal.role}`);
    }
    next();
  };
}
