import { describe, expect, it } from 'vitest';
import { lastAnswerWhileUnreachable, onceConfirmed, Readiness } from '../../src/health/readiness.js';

function counted(fail: () => boolean) {
  const probe = async () => {
    probe.calls += 1;
    if (fail()) throw new Error('connect ECONNREFUSED 10.0.0.7:6379 password=hunter2');
  };
  probe.calls = 0;
  return probe;
}

describe('readiness', () => {
  it('runs each probe at most once per cache period, however many callers ask', async () => {
    let now = 0;
    const probe = counted(() => false);
    const readiness = new Readiness({ cacheMs: 1000, now: () => now }).add({
      name: 'queue-redis',
      required: true,
      probe,
    });
    await Promise.all(Array.from({ length: 500 }, () => readiness.report()));
    now = 999;
    await readiness.report();
    expect(probe.calls).toBe(1);
    now = 1000;
    await readiness.report();
    expect(probe.calls).toBe(2);
  });

  it('a required part failing is unavailable, any other is degraded; only names are told, never error text', async () => {
    let queueDown = false;
    let now = 0;
    const readiness = new Readiness({ cacheMs: 1000, now: () => now })
      .add({ name: 'queue-redis', required: true, probe: counted(() => queueDown) })
      .add({ name: 'postgres', required: false, probe: counted(() => true) });
    const degraded = await readiness.report();
    expect(degraded).toEqual({
      ready: true,
      body: { status: 'degraded', failing: ['postgres'], checks: { 'queue-redis': 'ok', postgres: 'failing' } },
    });
    queueDown = true;
    now = 5000;
    const down = await readiness.report();
    expect(down.ready).toBe(false);
    expect(down.body).toEqual({
      status: 'unavailable',
      failing: ['queue-redis', 'postgres'],
      checks: { 'queue-redis': 'failing', postgres: 'failing' },
    });
    expect(JSON.stringify(down)).not.toMatch(/ECONNREFUSED|10\.0\.0\.7|hunter2/);
  });

  it('a hung probe counts as failing after the timeout', async () => {
    const readiness = new Readiness({ timeoutMs: 20 }).add({
      name: 'postgres',
      required: true,
      probe: () => new Promise(() => undefined),
    });
    expect((await readiness.report()).body.failing).toEqual(['postgres']);
  });

  it('turns unready as soon as it drains, whatever the checks say', async () => {
    const readiness = new Readiness().add({ name: 'queue-redis', required: true, probe: async () => undefined });
    expect((await readiness.report()).ready).toBe(true);
    readiness.drain();
    expect(await readiness.report()).toMatchObject({ ready: false, body: { status: 'draining' } });
  });

  it('onceConfirmed stops probing after its first pass', async () => {
    let fails = true;
    const probe = counted(() => fails);
    const check = onceConfirmed(probe);
    await expect(check()).rejects.toThrow();
    fails = false;
    await check();
    fails = true;
    await check();
    expect(probe.calls).toBe(2);
  });

  it('lastAnswerWhileUnreachable keeps the last answer through an outage, and follows real changes', async () => {
    let state: 'current' | 'replaced' | 'down' = 'down';
    const check = lastAnswerWhileUnreachable(async () => {
      if (state === 'down') throw new Error('ECONNREFUSED');
      return state === 'current';
    }, 'not current');
    await expect(check()).rejects.toThrow('ECONNREFUSED');
    state = 'current';
    await check();
    state = 'down';
    await check();
    state = 'replaced';
    await expect(check()).rejects.toThrow('not current');
    state = 'down';
    await expect(check()).rejects.toThrow('ECONNREFUSED');
  });

  it('lastAnswerWhileUnreachable keeps the last answer while the dependency is too slow to answer', async () => {
    let answer: () => Promise<boolean> = () => Promise.resolve(true);
    const check = lastAnswerWhileUnreachable(() => answer(), 'not current', 50);
    await check();
    answer = () => new Promise<boolean>(() => undefined); // never answers
    await check();
    const fresh = lastAnswerWhileUnreachable(() => answer(), 'not current', 50);
    await expect(fresh()).rejects.toThrow('no answer within 50 ms');
  });
});
