import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Unavailable } from '../domain/errors.js';
import type { Db } from '../storage/postgres/database.js';
import {
  findActiveKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey as revokeStoredKey,
  ROLES,
  type ApiKeyRecord,
  type Role,
} from '../storage/postgres/api-keys-repository.js';

export { listApiKeys, ROLES, type Role };

/** Who an API key speaks for. */
export interface KeyPrincipal {
  /** Stable key id (rate-limit budgets are per id); `admin` for ADMIN_API_KEY. */
  id: string;
  /** Key name for logs and audit; never the key itself. */
  name: string;
  role: Role;
}

/** Who a player token speaks for: one member, reading (services/player-tokens.ts). */
export interface PlayerPrincipal {
  /** The member's budget id (a hash of the member id). */
  id: string;
  /** For logs: names no member, whose id an erasure must be able to remove. */
  name: string;
  role: 'player';
  /** The member the token was signed for (its `sub`). */
  member: string;
}

export type Principal = KeyPrincipal | PlayerPrincipal;

/** Whether a key of `role` may call a route needing `required`: its own role's, any as admin, read as a player. */
export function roleAllows(role: Principal['role'], required: Role): boolean {
  return role === 'admin' || role === required || (role === 'player' && required === 'read');
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Hashes of keys found unknown, remembered at most this many at once. */
const MAX_REFUSED_HASHES = 10_000;
/** ... and for this long: a key cannot be valid before it is created, and is random. */
const REFUSED_HASH_MS = 10_000;
/** How long past its expiry a key's principal still admits it while Postgres is down. */
export const KEY_STALE_WHILE_DOWN_MS = 300_000;

interface PresentedKey {
  hash: string;
  admin: boolean;
}

const ADMIN: KeyPrincipal = Object.freeze({ id: 'admin', name: 'admin (ADMIN_API_KEY)', role: 'admin' });

/**
 * Resolves a presented bearer key to its principal. Keys are random 256-bit strings, so a
 * SHA-256 hash is enough to store them (no password stretching needed); a key's hash is
 * compared with the admin key's in constant time (once per key: the outcome is remembered
 * with the hash), and stored keys are looked up by hash, never by the key.
 */
export class ApiKeyVerifier {
  private readonly adminHash: Buffer;
  private readonly cache = new Map<string, { principal: KeyPrincipal; until: number }>();
  // Bounded, so a flood of random keys costs a fixed amount of memory, not one entry each.
  private readonly refused = new LRUCache<string, true>({ max: MAX_REFUSED_HASHES, ttl: REFUSED_HASH_MS });
  // Bounded like `refused` (keys are at most 512 characters: auth.ts), so a flood of random
  // keys costs at most a few megabytes. Raw keys, as they are in every request's headers.
  private readonly presented = new LRUCache<string, PresentedKey>({ max: MAX_REFUSED_HASHES });
  /** Lookups in flight: concurrent requests with one key whose entry expired share one query. */
  private readonly looking = new Map<string, Promise<KeyPrincipal | null>>();

  constructor(
    private readonly db: Db,
    adminKey: string,
    private readonly cacheMs: number,
  ) {
    this.adminHash = Buffer.from(hashKey(adminKey), 'hex');
  }

  /** Drops cached lookups, so a key revoked through this process stops working at once. */
  forgetAll(): void {
    this.cache.clear();
    this.refused.clear();
  }

  /**
   * What is known about a key without asking Postgres: its principal (the admin key, or a
   * cached lookup), `refused` when it was looked up and not found a moment ago, or
   * undefined when only a lookup can tell.
   */
  known(presented: string): KeyPrincipal | 'refused' | undefined {
    return this.knownAs(this.identify(presented));
  }

  /**
   * Whether the key was found valid before (its entry may have expired since): its lookup then
   * renews a known key and spends no address's lookup budget, which is there for strangers.
   */
  remembers(presented: string): boolean {
    return this.cache.has(this.identify(presented).hash);
  }

  /** A key's hash, and whether it is the admin key, worked out once per key rather than per request. */
  private identify(presented: string): PresentedKey {
    let identity = this.presented.get(presented);
    if (!identity) {
      const hash = hashKey(presented);
      identity = { hash, admin: timingSafeEqual(Buffer.from(hash, 'hex'), this.adminHash) };
      this.presented.set(presented, identity);
    }
    return identity;
  }

  private knownAs({ hash, admin }: PresentedKey): KeyPrincipal | 'refused' | undefined {
    if (admin) return ADMIN;
    const hit = this.cache.get(hash);
    if (hit && hit.until > Date.now()) return hit.principal;
    return this.refused.has(hash) ? 'refused' : undefined;
  }

  async verify(presented: string): Promise<KeyPrincipal | null> {
    const identity = this.identify(presented);
    const { hash } = identity;
    const known = this.knownAs(identity);
    if (known === 'refused') return null;
    if (known) return known;
    let lookup = this.looking.get(hash);
    if (!lookup) {
      lookup = this.lookUp(hash).finally(() => this.looking.delete(hash));
      this.looking.set(hash, lookup);
    }
    return lookup;
  }

  /**
   * One Postgres lookup. While Postgres is down, a key found valid within
   * KEY_STALE_WHILE_DOWN_MS past its entry's expiry is still admitted: intake goes on through
   * an outage of minutes (a key revoked meanwhile through another process works that long).
   */
  private async lookUp(hash: string): Promise<KeyPrincipal | null> {
    let record: ApiKeyRecord | undefined;
    try {
      record = await findActiveKeyByHash(this.db, hash);
    } catch (err) {
      const stale = this.cache.get(hash);
      if (err instanceof Unavailable && stale && Date.now() - stale.until < KEY_STALE_WHILE_DOWN_MS)
        return stale.principal;
      throw err;
    }
    if (!record) {
      this.cache.delete(hash);
      this.refused.set(hash, true);
      return null;
    }
    const principal = { id: record.id, name: record.name, role: record.role };
    // Kept (expired) with cacheMs 0 too: it marks the key as known, see `remembers`.
    this.cache.set(hash, { principal, until: Date.now() + this.cacheMs });
    return principal;
  }
}

export async function createApiKey(db: Db, name: string, role: Role): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = `lrl_${randomBytes(32).toString('base64url')}`;
  const record = await insertApiKey(db, { name, role, keyHash: hashKey(key) });
  return { key, record };
}

const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Revokes an active key; false when no active key has that id (an id that is no UUID names none). */
export async function revokeApiKey(db: Db, id: string): Promise<boolean> {
  return KEY_ID.test(id) && (await revokeStoredKey(db, id));
}
