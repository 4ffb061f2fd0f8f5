import { WORLD } from '../../domain/ids.js';

/**
 * Key layout of the leaderboard Redis. Every key of one (board, period) carries the hash
 * tag {board|period}, so the projection and rebuild scripts touch a single cluster slot.
 *
 *   <prefix>:lb:{board|period}:z:<category>:<region>   sorted set of one scope
 *   <prefix>:lb:{board|period}:st:<category>           member state index: sorted set of each bucket's lowest member id
 *   <prefix>:lb:{board|period}:st:<category>:<low>     a bucket: member -> "version|region|tie" (listpack-sized, lua/lib/member-state.lua)
 *   <prefix>:lb:{board|period}:rg:<category>           set of region codes that have a scope
 *   <prefix>:lb:{board|period}:ok                      hash category -> 1: Redis holds all of it
 *   <prefix>:lb:{board|period}:rb                      hash category -> token of a running rebuild
 *   <prefix>:lb:{board|period}:t:<token>:...           a rebuild's temp keys, same layout, and
 *   <prefix>:lb:{board|period}:t:<token>:pd:<category> live writes waiting for its replay
 *   <prefix>:lb:{board|period}:changes                 pub/sub channel of change notices (sharded on a cluster)
 *
 * Beside them, with the same hash tag so they ride in the projection's round trip, but
 * outside the period's `lb:` names (evicting or verifying a period never meets them):
 *
 *   <prefix>:lag:{board|period}:<hour>                 hash lag bucket (ms) -> events made visible in that hour
 *                                                      (epoch ms of its start), for the rollups; expires
 *
 * Outside any period, each in a slot of its own: <prefix>:pending (see pending()), the
 * "Laurel was here" markers <prefix>:lb:layout2 (one per master on a cluster), and the key
 * layout record <prefix>:lb:{layout}:* (key-layout.ts): any change to this layout raises KEY_LAYOUT.
 *
 * The member state remembers, per member, the aggregate version last projected and the
 * sorted-set entry it wrote, so a stale write is dropped and an old entry can be removed.
 * It is cut into buckets of up to 128 consecutive member ids so Redis stores each compactly.
 */
export class LeaderboardKeys {
  constructor(private readonly prefix: string) {}

  period(board: string, period: string): string {
    return `${this.prefix}:lb:{${board}|${period}}`;
  }

  scope(board: string, period: string, category: string, region: string = WORLD): string {
    return `${this.period(board, period)}:z:${category}:${region}`;
  }

  /** The index of a category's member state; its buckets are `<this>:<lowest member id>`. */
  state(board: string, period: string, category: string): string {
    return `${this.period(board, period)}:st:${category}`;
  }

  /** The regions that have a sorted set in the category (the scripts keep it). */
  regions(board: string, period: string, category: string): string {
    return `${this.period(board, period)}:rg:${category}`;
  }

  /** Event-to-visible lags of the hour starting at `hourMs` (additive: no ranking read depends on it). */
  lag(board: string, period: string, hourMs: number): string {
    return `${this.prefix}:lag:{${board}|${period}}:${hourMs}`;
  }

  /** Which categories of the period are complete in Redis; reads fall back to Postgres otherwise. */
  ok(board: string, period: string): string {
    return `${this.period(board, period)}:ok`;
  }

  /** The (sharded) pub/sub channel of the period's change notices: same slot as its keys. */
  changes(board: string, period: string): string {
    return `${this.period(board, period)}:changes`;
  }

  /** Events accepted by intake and not yet applied: `<board>|<idempotency key>` -> job id. */
  pending(): string {
    return `${this.prefix}:pending`;
  }
}
