import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { until } from '../support/poll.js';

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

describe('display names and follow lists in memory', () => {
  it('are served from memory, and a PUT in one process is seen by the others', async () => {
    expect((await h.api('PUT', '/v1/members/dm-a', { displayName: 'Ann' })).status).toBe(200);
    expect((await h.api('PUT', '/v1/members/dm-a/following', { memberIds: ['dm-b', 'dm-c'] })).status).toBe(200);
    await until('the other process caching', async () => other.members.caching || undefined);
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
    const names = await until('the new name in the other process', async () => {
      const n = Object.fromEntries(await other.members.displayNames(['dm-a', 'dm-b']));
      return n['dm-a'] === 'Annabel' ? n : undefined;
    });
    expect(names).toEqual({ 'dm-a': 'Annabel' });
    expect((await h.api('PUT', '/v1/members/dm-a/following', { memberIds: ['dm-c'] })).status).toBe(200);
    const follows = await until('the new follow list in the other process', async () => {
      const ids = await other.members.followedBy('dm-a');
      return ids.length === 1 ? ids : undefined;
    });
    expect(follows).toEqual(['dm-c']);
  });
});
