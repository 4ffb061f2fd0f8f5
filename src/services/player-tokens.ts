import { createHash } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { MEMBER_ID } from '../domain/ids.js';
import { NotConfigured } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';
import type { PlayerPrincipal } from './api-keys.js';

/** The issuer every player token names: a token of another issuer is someone else's. */
export const PLAYER_TOKEN_ISSUER = 'laurel';
const ALGORITHM = 'HS256';

export const playerTokenRequestSchema = z
  .object({
    member: z.string().regex(MEMBER_ID, 'must match ^[A-Za-z0-9_.:@-]{1,128}$'),
    ttlSeconds: z.number().int().min(60).max(86_400).default(3600),
  })
  .strict();

/**
 * The member's budget and stream-cap id: a hash, so the rate limiter's Redis keys and the
 * access log never hold a member id an erasure would have to find.
 */
function budgetId(member: string): string {
  return `player:${createHash('sha256').update(member).digest('base64url').slice(0, 22)}`;
}

const NOT_CONFIGURED = 'player tokens are not configured: set PLAYER_TOKEN_SECRET';

/**
 * Mints and verifies player tokens: JWTs (HS256, `iss: laurel`, `sub` the member) a game
 * client sends to read as its member. They are signed with PLAYER_TOKEN_SECRET, which the
 * studio's own backend may hold too, so a token from either verifies the same way. Without
 * the secret, none is minted or accepted.
 */
export class PlayerTokens {
  private readonly key: Uint8Array | null;

  constructor(
    secret: string | undefined,
    private readonly clock: Clock,
  ) {
    this.key = secret === undefined ? null : new TextEncoder().encode(secret);
  }

  get configured(): boolean {
    return this.key !== null;
  }

  async mint(body: unknown): Promise<{ token: string; member: string; expiresAt: string }> {
    if (!this.key) throw new NotConfigured(NOT_CONFIGURED);
    const { member, ttlSeconds } = parseOrThrow(playerTokenRequestSchema, body, 'player token request');
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    const expiresAt = issuedAt + ttlSeconds;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setIssuer(PLAYER_TOKEN_ISSUER)
      .setSubject(member)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.key);
    return { token, member, expiresAt: new Date(expiresAt * 1000).toISOString() };
  }

  /**
   * The principal of a valid token, or null: no secret, a bad signature, another algorithm
   * or issuer, an expired token, or a subject that is no member id.
   */
  async verify(token: string): Promise<PlayerPrincipal | null> {
    if (!this.key) return null;
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: PLAYER_TOKEN_ISSUER,
        requiredClaims: ['sub', 'exp'],
        currentDate: this.clock.now(),
      });
      const member = payload.sub!;
      if (!MEMBER_ID.test(member)) return null;
      return { id: budgetId(member), name: 'player token', role: 'player', member };
    } catch (err) {
      // Anything jose refuses is a bad token; anything else is a fault worth a 500.
      if (err instanceof joseErrors.JOSEError) return null;
      throw err;
    }
  }
}
