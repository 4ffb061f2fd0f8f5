import { LRUCache } from 'lru-cache';
import type { Db } from '../storage/postgres/database.js';
import { displayNames, followedBy } from '../storage/postgres/members-repository.js';
import type { MemberChanges } from '../storage/redis/member-changes.js';

/** Entries kept per cache; a display name is at most 100 characters, a follow list at most 1,000 ids. */
const MAX_NAMES = 200_000;
const MAX_FOLLOW_IDS = 2_000_000;
/** A safety net only: changes reach every process at once through MemberChanges. */
const TTL_MS = 5 * 60_000;

/**
 * Display names and follow lists for the standings reads, from memory when possible, so
 * a read Redis answers makes no Postgres round trip. Bounded (LRU), and exact: a change
 * (PUT /v1/members/...) is announced to every process, which drops its copy; while that
 * announcement channel is not live, nothing is cached and every read asks Postgres.
 */
export class MemberDirectory {
  private readonly names = new LRUCache<string, { name: string | null }>({ max: MAX_NAMES, ttl: TTL_MS });
  private readonly follows = new LRUCache<string, readonly string[]>({
    maxSize: MAX_FOLLOW_IDS,
    sizeCalculation: (ids) => ids.length + 1,
    ttl: TTL_MS,
  });
  private live = false;
  /** Bumped by every change: a Postgres read that overlapped one is not cached. */
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly changes: MemberChanges,
  ) {}

  /** Whether reads are served from memory now (the change notices are being received). */
  get caching(): boolean {
    this.start();
    return this.live;
  }

  private start(): void {
    this.changes.listen({
      onChange: (member, erased) => this.forget(member, erased),
      onReset: (live) => {
        this.generation++;
        this.names.clear();
        this.follows.clear();
        this.live = live;
      },
    });
  }

  /** An erased member leaves no trace either in the follow lists of those who followed them. */
  private forget(member: string, erased = false): void {
    this.generation++;
    this.names.delete(member);
    this.follows.delete(member);
    if (!erased) return;
    const naming = [...this.follows.entries()].filter(([, ids]) => ids.includes(member)).map(([id]) => id);
    for (const id of naming) this.follows.delete(id);
  }

  /** Whether anything cached here names the member (a name, a follow list of theirs or one that follows them). */
  mentions(member: string): boolean {
    if (this.names.has(member) || this.follows.has(member)) return true;
    return [...this.follows.values()].some((ids) => ids.includes(member));
  }

  /** Display names of the given members (those without one are left out). */
  async displayNames(memberIds: readonly string[]): Promise<Map<string, string>> {
    this.start();
    const found = new Map<string, string>();
    const missing: string[] = [];
    for (const id of memberIds) {
      const hit = this.live ? this.names.get(id) : undefined;
      if (!hit) missing.push(id);
      else if (hit.name !== null) found.set(id, hit.name);
    }
    if (missing.length === 0) return found;
    const generation = this.generation;
    const loaded = await displayNames(this.db, missing);
    const keep = this.live && generation === this.generation;
    for (const id of missing) {
      const name = loaded.get(id) ?? null;
      if (name !== null) found.set(id, name);
      if (keep) this.names.set(id, { name });
    }
    return found;
  }

  async followedBy(memberId: string): Promise<readonly string[]> {
    this.start();
    const hit = this.live ? this.follows.get(memberId) : undefined;
    if (hit) return hit;
    const generation = this.generation;
    const ids = await followedBy(this.db, memberId);
    if (this.live && generation === this.generation) this.follows.set(memberId, ids);
    return ids;
  }

  /**
   * After a committed change of the member: this process forgets at once, the others when
   * the notice reaches them. If Redis cannot take the notice, the other processes stop
   * caching anyway when they lose their subscription; the bounded TTL covers the rest.
   */
  async changed(memberId: string): Promise<void> {
    await this.changedAll([memberId]);
  }

  /** `changed` for several members: the notices are sent at once, not one after another. */
  async changedAll(memberIds: readonly string[]): Promise<void> {
    for (const id of memberIds) this.forget(id);
    await Promise.all(memberIds.map((id) => this.changes.publish(id).catch(() => undefined)));
  }

  /**
   * After an erasure's commit: as `changed`, and every process also drops the follow lists
   * naming the member. A notice Redis refuses fails the erasure job, whose retry sends it again.
   */
  async erased(memberId: string): Promise<void> {
    this.forget(memberId, true);
    await this.changes.publish(memberId, true);
  }
}
