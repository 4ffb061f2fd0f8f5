/**
 * Readiness as a small set of named checks. A `required` check failing makes the process
 * unready (503): it cannot do its job. Any other failing check leaves it ready but
 * `degraded`, named in the body, so a short outage of a dependency the process can work
 * around does not take every replica out of a load balancer at once.
 *
 * Probes are public and unauthenticated, so the answer is computed at most once per
 * `cacheMs` whatever the call rate, and it names only the failing parts, never an error text.
 */
export interface ReadinessCheck {
  name: string;
  required: boolean;
  probe(): Promise<unknown>;
}

export type ReadinessStatus = 'ready' | 'degraded' | 'unavailable' | 'draining';

export interface ReadinessReport {
  ready: boolean;
  body: { status: ReadinessStatus; failing?: string[]; checks: Record<string, 'ok' | 'failing'> };
}

export interface ReadinessOptions {
  cacheMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

export class Readiness {
  private readonly checks: ReadinessCheck[] = [];
  private draining = false;
  private cached: { at: number; report: Promise<ReadinessReport> } | undefined;
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(options: ReadinessOptions = {}) {
    this.cacheMs = options.cacheMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.now = options.now ?? Date.now;
  }

  add(check: ReadinessCheck): this {
    this.checks.push(check);
    this.cached = undefined;
    return this;
  }

  /** From now on the process reports 503: load balancers stop sending it new work. */
  drain(): void {
    this.draining = true;
  }

  report(): Promise<ReadinessReport> {
    const now = this.now();
    if (!this.cached || now - this.cached.at >= this.cacheMs) this.cached = { at: now, report: this.evaluate() };
    return this.cached.report.then((r) =>
      this.draining ? { ready: false, body: { ...r.body, status: 'draining' } } : r,
    );
  }

  private async evaluate(): Promise<ReadinessReport> {
    const results = await Promise.all(this.checks.map(async (c) => ({ check: c, ok: await this.passes(c) })));
    const failing = results.filter((r) => !r.ok);
    const unready = failing.some((r) => r.check.required);
    return {
      ready: !unready,
      body: {
        status: unready ? 'unavailable' : failing.length ? 'degraded' : 'ready',
        ...(failing.length ? { failing: failing.map((r) => r.check.name) } : {}),
        checks: Object.fromEntries(results.map((r) => [r.check.name, r.ok ? 'ok' : 'failing'])),
      },
    };
  }

  private async passes(check: ReadinessCheck): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), this.timeoutMs);
    });
    try {
      await Promise.race([check.probe(), timeout]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A probe that, once it has passed, passes for good without running again: for facts that
 * only a new release changes (migrations applied, stored functions installed). Until then
 * it runs on each evaluation, so a process started before Postgres notices it coming up.
 */
export function onceConfirmed(probe: () => Promise<unknown>): () => Promise<void> {
  let confirmed = false;
  return async () => {
    if (confirmed) return;
    await probe();
    confirmed = true;
  };
}

/**
 * A probe of a fact in a dependency (`check` answers whether it holds). While the dependency
 * cannot be asked, or does not answer within `answerWithinMs` (a Postgres busy with a burst
 * of fallback reads), the last answer stands: an outage or a slow server is reported by the
 * dependency's own check, and does not also fail every fact stored in it.
 */
export function lastAnswerWhileUnreachable(
  check: () => Promise<boolean>,
  failure: string,
  answerWithinMs = 1000,
): () => Promise<void> {
  let holds = false;
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${answerWithinMs} ms`)), answerWithinMs);
      });
      holds = await Promise.race([check(), late]);
    } catch (err) {
      if (!holds) throw err;
      return;
    } finally {
      clearTimeout(timer);
    }
    if (!holds) throw new Error(failure);
  };
}
