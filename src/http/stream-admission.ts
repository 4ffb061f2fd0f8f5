import { streamsMax, type Env } from '../config/env.js';
import type { Principal } from '../services/api-keys.js';
import { HttpError } from './errors.js';
import { ipBudgetId } from './rate-limit.js';

/**
 * How long a refused client waits before asking again: streams end when their clients
 * leave, so a slot frees at no set time; a few seconds keeps a reconnect loop cheap.
 */
const RETRY_AFTER_SECONDS = 5;

/** Open streams counted by key, member or address: a name is dropped when its count reaches zero. */
class Counts {
  private readonly open = new Map<string, number>();
  constructor(private readonly cap: number) {}

  full(id: string): boolean {
    return this.cap > 0 && (this.open.get(id) ?? 0) >= this.cap;
  }

  add(id: string): void {
    this.open.set(id, (this.open.get(id) ?? 0) + 1);
  }

  remove(id: string): void {
    const left = (this.open.get(id) ?? 1) - 1;
    if (left > 0) this.open.set(id, left);
    else this.open.delete(id);
  }
}

/**
 * The open event streams of one web process. A stream holds its connection for as long as
 * its client stays, and costs one request of the rate budget however long that is, so the
 * budget alone cannot stop one key, one member (player tokens) or one address from holding
 * every connection: each gets a cap of open streams (`429` beyond, like a spent budget), and the process a cap below its
 * connection limit (`503` beyond: this process is full, another may not be), which keeps
 * connections free for probes, intake and reads.
 */
export class StreamAdmission {
  private total = 0;
  private readonly byKey: Counts;
  private readonly byPlayer: Counts;
  private readonly byIp: Counts;
  private readonly max: number;

  constructor(
    env: Pick<
      Env,
      'STREAMS_MAX' | 'HTTP_MAX_CONNECTIONS' | 'STREAMS_PER_KEY' | 'STREAMS_PER_PLAYER' | 'STREAMS_PER_IP'
    >,
  ) {
    this.max = streamsMax(env);
    this.byKey = new Counts(env.STREAMS_PER_KEY);
    this.byPlayer = new Counts(env.STREAMS_PER_PLAYER);
    this.byIp = new Counts(env.STREAMS_PER_IP);
  }

  /**
   * Takes a stream's place for the principal (none: a public read), or throws the refusal;
   * the returned function gives it back (once).
   */
  admit(principal: Principal | undefined, ip: string | undefined): () => void {
    const address = ipBudgetId(ip);
    // A member's tokens share one count, whoever signed them; a key has its own.
    const player = principal?.role === 'player';
    const holder = principal === undefined ? null : player ? this.byPlayer : this.byKey;
    const id = principal?.id ?? '';
    if (holder?.full(id)) throw refusal(429, `this ${player ? 'member' : 'key'} holds its most open streams`);
    if (this.byIp.full(address)) throw refusal(429, 'this address holds its most open streams');
    if (this.total >= this.max) throw refusal(503, 'this web process serves its most open streams');
    this.total += 1;
    holder?.add(id);
    this.byIp.add(address);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.total -= 1;
      holder?.remove(id);
      this.byIp.remove(address);
    };
  }

  get open(): number {
    return this.total;
  }
}

function refusal(status: 429 | 503, why: string): HttpError {
  return new HttpError(
    status,
    status === 429 ? 'rate_limited' : 'unavailable',
    `${why}; close one or retry in ${RETRY_AFTER_SECONDS} s`,
    undefined,
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );
}
