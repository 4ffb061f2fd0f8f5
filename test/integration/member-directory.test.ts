import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';

let h: Harness;
/** A second process's view: same database and Redis prefix, its own caches. */
let other: AppContext;

beforeAll(async () => {
  h = await createHarness({ workers: false });
  other = createContext(h.env, { log: createLogger('silent'), name: 'laurel-test-other' });
});
afterAll(async () => {
  await other.close();
  await h.close();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('display names and follow lists in memory', () => {
  it('are served from memory, and a PUT in one process is seen by the others', async () => {
    expect((await h.api('PUT', '/v1/members/dm-a', { displayName: 'Ann' })).status).toBe(200);
    expect((await h.api('PUT', '/v1/members/dm-a/following', { memberIds: ['dm-b', 'dm-c'] })).status).toBe(200);
    await until(async () => other.members.caching, (live) => live);
    expect(other.members.caching).toBe(true);

    expect(Object.fromEntries(await other.members.displayNames(['dm-a', 'dm-b']))).toEqual({ 'dm-a': 'Ann' });
    expect(await other.members.followedBy('dm-a')).toEqual(['dm-b', 'dm-c']);

    // Written behind Laurel's back: the cached copies stay, which shows they come from memory.
    await h.ctx.db.updateTable('members').set({ display_name: 'Changed in SQL' }).where('id', '=', 'dm-a').execute();
    await h.ctx.db.deleteFrom('member_follows').where('member_id', '=', 'dm-a').execute();
    expect(Object.fromEntries(await other.members.displayNames(['dm-a']))).toEqual({ 'dm-a': 'Ann' });
    expect(await other.members.followedBy('dm-a')).toEqual(['dm-b', 'dm-c']);

    // Through the API, in the harness's process: the other process drops its copies.
    expect((await h.api('PUT', '/v1/members/dm-a', { displayName: 'Annabel' })).status).toBe(200);
    const names = await until(
      async () => Object.fromEntries(await other.members.displayNames(['dm-a', 'dm-b'])),
      (n) => n['dm-a'] === 'Annabel',
    );
    expect(names).toEqual({ 'dm-a': 'Annabel' });
    expect((await h.api('PUT', '/v1/members/dm-a/following', { memberIds: ['dm-c'] })).status).toBe(200);
    expect(await until(() => other.members.followedBy('dm-a'), (ids) => ids.length === 1)).toEqual(['dm-c']);
  });
});
