import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTick } from '../../src/services/period-tick.js';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { launchBrowser } from '../support/browser.js';

// The console (docs/operations.md) driven in a real Chromium against a real Laurel. Expected
// standings are computed here from the values posted, never read back from Laurel first.
// CONSOLE_SCREENSHOTS=1 also writes each page to docs/console/ for docs/operations.md.

const NOW = new Date('2026-12-02T12:00:00Z');
const SHOTS = process.env.CONSOLE_SCREENSHOTS ? 'docs/console' : null;
interface Scored {
  member: string;
  value: number;
}

// 120 members with distinct values (37 is coprime to 1000); `best`, `desc`: higher first.
const MEMBERS: Scored[] = Array.from({ length: 120 }, (_, i) => ({
  member: `p${String(i + 1).padStart(3, '0')}`,
  value: (((i + 1) * 37) % 1000) + 1,
}));
const ranked = (list: Scored[]) => [...list].sort((a, b) => b.value - a.value);
const HOSTILE_NAME = '<img src=x onerror="document.title=1">';

let h: Harness;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const apiCalls: Array<{ url: URL; authorization: string | undefined; cookie: string | undefined }> = [];
const violations: string[] = [];

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** The text of each body row's cells. */
function rowsOf(table: Locator): Promise<string[][]> {
  return table
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((r: any) => [...r.cells].map((c: any) => String(c.textContent ?? ''))));
}

/** The value shown for a term of a facts list inside `scope`. */
function fact(scope: Locator, term: string): Locator {
  return scope.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');
}

async function post(events: Array<Record<string, unknown>>): Promise<void> {
  const res = await h.api('POST', '/v1/events?wait=true', { events });
  expect(res.status).toBe(200);
  expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(events.map(() => 'applied'));
}

const go = (hash: string) => page.goto(`${h.baseUrl}/console/#${hash}`);
/** How wide the page is laid out: more than the window means a sideways scroll. */
const pageWidth = (on: Page = page) => on.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);

beforeAll(async () => {
  h = await createHarness({ env: { PLAYER_TOKEN_SECRET: 'console-player-token-secret-4f9a1c7e2b8d' } });
  h.clock.set(NOW);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(() => {
    const doc = (globalThis as any).document;
    doc.addEventListener('securitypolicyviolation', (e: any) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/v1/'))
      apiCalls.push({ url, authorization: request.headers().authorization, cookie: request.headers().cookie });
  });
  page.on('console', (message) => {
    if (/CSP violation|Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the console', () => {
  it('is served without a key, as static files under a policy that runs its own scripts only', async () => {
    const bare = await fetch(`${h.baseUrl}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/');
    const shell = await fetch(`${h.baseUrl}/console/`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = shell.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(shell.headers.get('set-cookie')).toBeNull();
    expect((await fetch(`${h.baseUrl}/console/app.js`)).headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${h.baseUrl}/console/no-such-file.js`)).status).toBe(404);
  });

  it('builds its pages from text and elements, never from markup', () => {
    const files = readdirSync('src/console', { recursive: true, encoding: 'utf8' }).filter((f) =>
      /\.(js|html)$/.test(f),
    );
    expect(files).toContain('app.js');
    for (const file of files) {
      const text = readFileSync(`src/console/${file}`, 'utf8');
      expect(text, file).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|style=|<script>/,
      );
    }
  });

  it('type-checks its scripts against the DOM (tsconfig.console.json: no build step, so no compiler runs otherwise)', async () => {
    const checked = await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.console.json'], {
      cwd: process.cwd(),
    }).then(
      () => ({ ok: true, output: '' }),
      (err: { stdout: string }) => ({ ok: false, output: err.stdout }),
    );
    expect(checked).toEqual({ ok: true, output: '' });
  });

  it('refuses a wrong key and a non-admin key with the API message and stays on the login', async () => {
    await go('/boards');
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await shot('login');
    await page.getByLabel('Admin key').fill('not-a-key');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('401 unknown or revoked API key');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.getByRole('navigation').isHidden()).toBe(true);

    const read = (await h.api('POST', '/v1/admin/keys', { name: 'console-read', role: 'read' })).body;
    await page.getByLabel('Admin key').fill(read.key);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('403 this route needs the admin role; the key "console-read" has read');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('logs in with the admin key, kept in session storage and never in a cookie', async () => {
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Boards' }).waitFor();
    await page.getByText('No boards yet.').waitFor();
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([ADMIN_KEY]);
    expect(await page.context().cookies()).toEqual([]);
  });

  it('creates a board, showing the API validation message for a bad field first, then edits it', async () => {
    await page.getByRole('link', { name: 'New board' }).click();
    await page.getByLabel('Board id').fill('arena');
    await page.getByLabel('Display name').fill('Arena');
    await page.getByLabel('Period', { exact: true }).selectOption('all');
    await page.getByLabel('Categories').fill('solo, duo');
    await page.getByLabel('Decimals').fill('9');
    await page.getByRole('button', { name: 'Create board' }).click();
    // The same mistake sent to the API directly: the console must show its words.
    const refused = await h.api('PUT', '/v1/boards/probe', { aggregation: 'best', decimals: 9 });
    expect(refused.status).toBe(400);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(`400 ${refused.body.message}`);
    expect(await alert.locator('li').allTextContents()).toEqual(
      refused.body.details.map((d: { path: string; message: string }) => `${d.path}: ${d.message}`),
    );
    await shot('board-form');

    await page.getByLabel('Decimals').fill('0');
    await page.getByRole('button', { name: 'Create board' }).click();
    await page.getByText('Board arena saved.').waitFor();
    const created = (await h.api('GET', '/v1/boards/arena')).body;
    expect(created).toMatchObject({
      displayName: 'Arena',
      aggregation: 'best',
      order: 'desc',
      period: 'all',
      categories: ['solo', 'duo'],
      decimals: 0,
      minValue: null,
    });

    const row = page.getByRole('table', { name: 'Boards' }).locator('tbody tr', { hasText: 'arena' });
    await row.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit board arena' }).waitFor();
    await page.getByLabel('Display name').fill('Arena Cup');
    await page.getByLabel('Maximum value').fill('100000');
    await page.getByRole('button', { name: 'Save board' }).click();
    await page.getByText('Board arena saved.').waitFor();
    expect((await h.api('GET', '/v1/boards/arena')).body).toMatchObject({
      displayName: 'Arena Cup',
      maxValue: 100000,
      categories: ['solo', 'duo'],
      period: 'all',
    });
    await shot('boards');
  });

  it('pages through standings, finds a member and their neighbours, and follows the live top 10', async () => {
    expect((await h.api('PUT', '/v1/members/p003', { displayName: HOSTILE_NAME })).status).toBe(200);
    await post(
      MEMBERS.map((m) => ({ board: 'arena', member: m.member, value: m.value, idempotencyKey: `arena-${m.member}` })),
    );
    const expected = ranked(MEMBERS);

    await go('/standings/arena');
    const standings = page.getByRole('table', { name: 'Standings' });
    await expect.poll(async () => (await rowsOf(standings)).length).toBe(50);
    const firstPage = await rowsOf(standings);
    expect(firstPage.map((r) => [r[0], r[1], r[3]])).toEqual(
      expected.slice(0, 50).map((m, i) => [String(i + 1), m.member, String(m.value)]),
    );
    await page.getByText('ranks 1–50 of 120').waitFor();

    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('ranks 51–100 of 120').waitFor();
    expect((await rowsOf(standings))[0]!.slice(0, 2)).toEqual(['51', expected[50]!.member]);

    await page.getByRole('textbox', { name: 'Go to rank' }).fill('117');
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await page.getByText('ranks 101–120 of 120').waitFor();
    expect((await rowsOf(standings)).find((r) => r[0] === '117')![1]).toBe(expected[116]!.member);

    // A display name is shown as text, never run as markup.
    const hostileRank = expected.findIndex((m) => m.member === 'p003') + 1;
    await page.getByRole('textbox', { name: 'Go to rank' }).fill(String(hostileRank));
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await expect.poll(async () => (await rowsOf(standings)).find((r) => r[1] === 'p003')?.[2]).toBe(HOSTILE_NAME);
    expect(await page.locator('main img').count()).toBe(0);

    const sought = expected[76]!;
    await page.getByLabel('Member id').fill(sought.member);
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    const finder = page.getByRole('region', { name: 'Find a member' });
    await expect.poll(() => fact(finder, 'Rank').textContent()).toBe('77');
    expect(await fact(finder, 'Score').textContent()).toBe(String(sought.value));
    // The rounded share the API gives, never the raw fraction.
    const placed = (await h.api('GET', `/v1/boards/arena/standings/${sought.member}`)).body;
    expect(await fact(finder, 'Top').textContent()).toBe(`Top ${placed.topPercent}%`);
    expect(await finder.textContent()).not.toContain(String(placed.percentile));
    const around = page.getByRole('table', { name: 'Around the member' });
    expect((await rowsOf(around)).map((r) => [r[0], r[1]])).toEqual(
      expected.slice(71, 82).map((m, i) => [String(72 + i), m.member]),
    );

    const live = page.getByRole('table', { name: 'Live top 10' });
    await expect
      .poll(async () => (await rowsOf(live)).map((r) => r[1]))
      .toEqual(expected.slice(0, 10).map((m) => m.member));
    await shot('standings');
    // A new leader reaches the open page through the stream, without a reload.
    await post([{ board: 'arena', member: 'newcomer', value: 5000, idempotencyKey: 'arena-newcomer' }]);
    await expect.poll(async () => (await rowsOf(live))[0]?.slice(0, 2), { timeout: 10_000 }).toEqual(['1', 'newcomer']);
    await expect.poll(() => fact(finder, 'Rank').textContent(), { timeout: 10_000 }).toBe('78');
  });

  it('excludes a member with a reason and restores them with one, and the standings change each time', async () => {
    const leader = ranked(MEMBERS)[0]!;
    const afterLeader = ranked(MEMBERS)[1]!;
    const placeOf = async (member: string) => (await h.api('GET', `/v1/boards/arena/standings/${member}`)).body.rank;
    expect(await placeOf(leader.member)).toBe(2); // behind the newcomer

    await go(`/members/${leader.member}`);
    const profile = page.getByRole('region', { name: 'Profile' });
    await expect.poll(() => fact(profile, 'Excluded').textContent()).toBe('no');
    await page.getByRole('form', { name: 'Exclude' }).getByLabel('Reason').fill('impossible times');
    await page.getByRole('button', { name: 'Exclude' }).click();
    await expect.poll(() => fact(profile, 'Excluded').textContent()).toBe('yes');
    expect((await rowsOf(page.getByRole('table', { name: 'Exclusions' })))[0]!.slice(0, 2)).toEqual([
      'impossible times',
      'admin (ADMIN_API_KEY)',
    ]);
    const boards = page.getByRole('table', { name: 'Member standings' });
    // Unranked because excluded, and said so.
    await expect.poll(async () => (await rowsOf(boards))[0]?.[2]).toBe('excluded');
    expect(await placeOf(leader.member)).toBeNull();

    await go('/standings/arena');
    const standings = page.getByRole('table', { name: 'Standings' });
    await expect
      .poll(async () => (await rowsOf(standings)).slice(0, 2).map((r) => r[1]))
      .toEqual(['newcomer', afterLeader.member]);
    await page.getByText('ranks 1–50 of 120').waitFor();

    await go(`/members/${leader.member}`);
    await page.getByRole('form', { name: 'Restore' }).getByLabel('Reason (optional)').fill('cleared on appeal');
    await page.getByRole('button', { name: 'Restore' }).click();
    await expect.poll(() => fact(profile, 'Excluded').textContent()).toBe('no');
    // The restore's reason is recorded with the exclusion it ended, and shown beside it.
    const history = (await h.api('GET', `/v1/members/${leader.member}`)).body.exclusions;
    expect(history).toMatchObject([
      { reason: 'impossible times', restoredBy: 'admin (ADMIN_API_KEY)', restoreReason: 'cleared on appeal' },
    ]);
    const exclusions = await rowsOf(page.getByRole('table', { name: 'Exclusions' }));
    expect([exclusions[0]![0], exclusions[0]![3], exclusions[0]![5]]).toEqual([
      'impossible times',
      'admin (ADMIN_API_KEY)',
      'cleared on appeal',
    ]);
    await shot('member');
    await expect.poll(async () => (await rowsOf(boards))[0]?.[2]).toBe('2');
    const back = (await h.api('GET', `/v1/boards/arena/standings/${leader.member}`)).body;
    expect((await rowsOf(boards))[0]?.[5]).toBe(`Top ${back.topPercent}%`);
    await go('/standings/arena');
    await expect
      .poll(async () => (await rowsOf(standings)).slice(0, 2).map((r) => r[1]))
      .toEqual(['newcomer', leader.member]);
    await page.getByText('ranks 1–50 of 121').waitFor();
  });

  it('looks up an event by its key and voids it with a reason; the member falls back to their other score', async () => {
    const member = MEMBERS[9]!;
    await post([{ board: 'arena', member: member.member, value: 4500, idempotencyKey: 'arena-suspect' }]);
    await go(`/members/${member.member}`);
    const boards = page.getByRole('table', { name: 'Member standings' });
    await expect.poll(async () => (await rowsOf(boards))[0]?.slice(2, 4)).toEqual(['2', '4500']);

    const lookup = page.getByRole('form', { name: 'Look up an event' });
    await lookup.getByLabel('Idempotency key').fill('arena-suspect');
    await lookup.getByRole('button', { name: 'Look up' }).click();
    const card = page.getByLabel('Event arena-suspect');
    await expect.poll(() => fact(card, 'Status').textContent()).toBe('applied');
    expect(await fact(card, 'Value').textContent()).toBe('4500');
    await card.getByLabel('Reason').fill('replayed packet');
    await card.getByRole('button', { name: 'Void' }).click();

    const expectedRank =
      ranked([...MEMBERS, { member: 'newcomer', value: 5000 }]).findIndex((m) => m.member === member.member) + 1;
    await expect
      .poll(async () => (await rowsOf(boards))[0]?.slice(2, 4))
      .toEqual([String(expectedRank), String(member.value)]);
    expect((await h.api('GET', '/v1/events/arena-suspect')).body).toMatchObject({
      status: 'voided',
      voidReason: 'replayed packet',
    });
    await lookup.getByLabel('Idempotency key').fill('arena-suspect');
    await lookup.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => fact(card, 'Status').textContent()).toBe('voided');
    expect(await fact(card, 'Reason').textContent()).toBe('replayed packet');
    expect(await card.getByRole('button', { name: 'Void' }).count()).toBe(0);

    await lookup.getByLabel('Idempotency key').fill('no-such-event');
    await lookup.getByRole('button', { name: 'Look up' }).click();
    const missing = await h.api('GET', '/v1/events/no-such-event');
    expect(missing.status).toBe(404);
    await expect.poll(() => lookup.getByRole('alert').textContent()).toBe(`404 ${missing.body.message}`);

    // Keys are per board: a key on two boards is looked up with its board.
    expect((await h.api('PUT', '/v1/boards/arena-weekly', { aggregation: 'sum', period: 'week' })).status).toBe(201);
    await post([
      { board: 'arena', member: member.member, value: 1, idempotencyKey: 'match-77' },
      { board: 'arena-weekly', member: member.member, value: 3, idempotencyKey: 'match-77' },
    ]);
    await lookup.getByLabel('Idempotency key').fill('match-77');
    await lookup.getByRole('button', { name: 'Look up' }).click();
    const ambiguous = await h.api('GET', '/v1/events/match-77');
    expect(ambiguous.body.error).toBe('ambiguous_key');
    await expect
      .poll(() => lookup.getByRole('alert').textContent())
      .toBe(`409 ${ambiguous.body.message}board: arena, arena-weekly`);
    await lookup.getByLabel('Board (when the key is on several)').fill('arena-weekly');
    await lookup.getByRole('button', { name: 'Look up' }).click();
    const weekly = page.getByLabel('Event match-77');
    await expect.poll(() => fact(weekly, 'Value').textContent()).toBe('3');
    expect(await fact(weekly, 'Board').textContent()).toBe('arena-weekly');
  });

  it("voids an event from the member's events list; the standings change and the row shows the void", async () => {
    const member = MEMBERS[19]!;
    await post([{ board: 'arena', member: member.member, value: 4800, idempotencyKey: 'arena-boost' }]);
    await go(`/members/${member.member}`);
    const boards = page.getByRole('table', { name: 'Member standings' });
    await expect.poll(async () => (await rowsOf(boards))[0]?.slice(2, 4)).toEqual(['2', '4800']);
    const events = page.getByRole('table', { name: 'Member events' });
    const rowOf = async (key: string) => (await rowsOf(events)).find((r) => r[0] === key)?.slice(0, 7);
    await expect
      .poll(() => rowOf('arena-boost'))
      .toEqual(['arena-boost', 'arena', 'all', 'applied', '4800', expect.any(String), '—']);
    expect((await rowOf(`arena-${member.member}`))?.[3]).toBe('applied');
    const voidIt = page.getByRole('form', { name: 'Void arena-boost' });
    await voidIt.getByLabel('Reason').fill('modified client');
    await voidIt.getByRole('button', { name: 'Void' }).click();

    const expectedRank =
      ranked([...MEMBERS, { member: 'newcomer', value: 5000 }]).findIndex((m) => m.member === member.member) + 1;
    await expect
      .poll(async () => (await rowsOf(boards))[0]?.slice(2, 4))
      .toEqual([String(expectedRank), String(member.value)]);
    await expect
      .poll(() => rowOf('arena-boost'))
      .toEqual(['arena-boost', 'arena', 'all', 'voided', '4800', expect.any(String), 'modified client']);
    expect((await rowOf(`arena-${member.member}`))?.[3]).toBe('applied');
    expect(await page.getByRole('form', { name: 'Void arena-boost' }).count()).toBe(0);
    expect((await h.api('GET', '/v1/events/arena-boost')).body).toMatchObject({
      status: 'voided',
      voidReason: 'modified client',
    });
    const standing = (await h.api('GET', `/v1/boards/arena/standings/${member.member}`)).body;
    expect([standing.rank, standing.score]).toEqual([expectedRank, member.value]);
  });

  it('starts a rebuild and shows its progress until it finishes', async () => {
    await go('/rebuilds');
    await page.getByLabel('Board').selectOption('arena');
    await page.getByRole('button', { name: 'Start rebuild' }).click();
    await page.getByRole('heading', { name: /^Rebuild / }).waitFor();
    const id = decodeURIComponent(page.url().split('#/rebuilds/')[1]!);
    await expect.poll(() => fact(page.locator('main'), 'State').textContent(), { timeout: 30_000 }).toBe('completed');
    const status = (await h.api('GET', `/v1/admin/rebuilds/${id}`)).body;
    expect(status).toMatchObject({ state: 'completed', request: { board: 'arena', fromEvents: false } });
    expect(await fact(page.locator('main'), 'Progress').textContent()).toBe(
      `${status.progress.total} of ${status.progress.total} scopes (100%)`,
    );
    const rebuilt = await rowsOf(page.getByRole('table', { name: 'Rebuilt scopes' }));
    // 120 members and the newcomer have a score in the whole board.
    expect(rebuilt.find((r) => r[2] === 'all')!.slice(0, 4)).toEqual(['arena', 'all', 'all', '121']);
    await shot('rebuild');
    await go('/rebuilds');
    await expect
      .poll(async () => (await rowsOf(page.getByRole('table', { name: 'Rebuilds started' })))[0]?.[0])
      .toBe(id);
  });

  it('shows periods with their states, and a closed period’s final standings and awards', async () => {
    expect(
      (
        await h.api('PUT', '/v1/boards/daily', {
          aggregation: 'sum',
          period: 'day',
          graceSeconds: 0,
          displayName: 'Daily',
        })
      ).status,
    ).toBe(201);
    const day: Scored[] = [
      { member: 'd-ann', value: 30 },
      { member: 'd-bob', value: 50 },
      { member: 'd-cy', value: 10 },
    ];
    await post(day.map((m, i) => ({ board: 'daily', member: m.member, value: m.value, idempotencyKey: `daily-${i}` })));
    h.clock.set('2026-12-03T00:05:00Z');
    expect((await runTick(h.ctx)).closed).toContain('daily/2026-12-02');

    await go('/periods/daily');
    const periods = page.getByRole('table', { name: 'Periods' });
    await expect.poll(async () => (await rowsOf(periods)).find((r) => r[0] === '2026-12-02')?.[3]).toBe('closed');
    await shot('periods');
    await periods
      .locator('tbody tr', { hasText: '2026-12-02' })
      .getByRole('link', { name: 'Results and awards' })
      .click();
    const final = page.getByRole('table', { name: 'Final standings' });
    await expect
      .poll(async () => (await rowsOf(final)).map((r) => [r[0], r[1], r[3]]))
      .toEqual(ranked(day).map((m, i) => [String(i + 1), m.member, String(m.value)]));
    const awards = await rowsOf(page.getByRole('table', { name: 'Awards' }));
    expect(awards).toContainEqual(['d-bob', 'top1', '1']);
    await shot('results');

    // Reports are a job of their own after the close: wait until the API has d-bob's.
    await expect
      .poll(async () => {
        const res = await h.api('GET', '/v1/members/d-bob/notifications');
        return res.body.notifications?.some((n: { kind: string }) => n.kind === 'period_report');
      })
      .toBe(true);
    await page.getByRole('table', { name: 'Awards' }).getByRole('link', { name: 'd-bob' }).first().click();
    await expect
      .poll(async () => (await rowsOf(page.getByRole('table', { name: 'Awards' })))[0]?.slice(0, 5))
      .toEqual(['daily', '2026-12-02', 'all / world', 'top1', '1']);
    // The notifications panel loads on its own, after the awards.
    await expect
      .poll(async () =>
        (await rowsOf(page.getByRole('table', { name: 'Notifications' })))
          .find((n) => n[1] === 'period_report')
          ?.slice(2, 4),
      )
      .toEqual(['daily', '2026-12-02']);
    // Awards, a report and the rest, and still no sideways scroll at 1280 px.
    expect(await pageWidth()).toBeLessThanOrEqual(1280);
  });

  it('browses league buckets by tier and number and shows a member’s placement and next tier', async () => {
    // 2026-12-03's league period is open (where the periods test left the clock).
    h.clock.set('2026-12-03T00:05:00Z');
    const league = { tiers: ['bronze', 'silver', 'gold'], bucketSize: 3, promote: 1, relegate: 1, startTier: 'silver' };
    expect(
      (
        await h.api('PUT', '/v1/boards/ladder', {
          aggregation: 'sum',
          period: 'day',
          graceSeconds: 0,
          displayName: 'Ladder',
          league,
        })
      ).status,
    ).toBe(201);
    // Eight members, their first events in a different order from the batch; lg-b plays twice.
    const played = [
      { member: 'lg-e', at: '00:00:05', value: 70 },
      { member: 'lg-a', at: '00:00:01', value: 20 },
      { member: 'lg-h', at: '00:00:08', value: 15 },
      { member: 'lg-c', at: '00:00:03', value: 90 },
      { member: 'lg-b', at: '00:00:02', value: 40 },
      { member: 'lg-g', at: '00:00:07', value: 35 },
      { member: 'lg-d', at: '00:00:04', value: 10 },
      { member: 'lg-f', at: '00:00:06', value: 55 },
      { member: 'lg-b', at: '00:04:00', value: 25 },
    ];
    await post(
      played.map((e, i) => ({
        board: 'ladder',
        member: e.member,
        value: e.value,
        occurredAt: `2026-12-03T${e.at}Z`,
        idempotencyKey: `ladder-${i}`,
      })),
    );

    // The reference (docs/design/leagues.md): buckets of 3 filled in the order of first events, each ranked
    // by its sums; the top `promote` go up and the bottom `relegate` down (promotion first in a
    // bucket too small for both), none past either end of the tiers.
    const firsts = new Map<string, string>();
    const sums = new Map<string, number>();
    for (const e of played) {
      if (!firsts.has(e.member) || e.at < firsts.get(e.member)!) firsts.set(e.member, e.at);
      sums.set(e.member, (sums.get(e.member) ?? 0) + e.value);
    }
    const order = [...firsts.keys()].sort((a, b) => firsts.get(a)!.localeCompare(firsts.get(b)!));
    const tierIndex = league.tiers.indexOf(league.startTier);
    const buckets = new Map<string, Array<{ member: string; rank: number; score: number; zone: string | null }>>();
    for (let i = 0; i < order.length; i += league.bucketSize) {
      const inBucket = order
        .slice(i, i + league.bucketSize)
        .map((member) => ({ member, score: sums.get(member)! }))
        .sort((a, b) => b.score - a.score);
      const promoted = tierIndex < league.tiers.length - 1 ? Math.min(league.promote, inBucket.length) : 0;
      const relegated = tierIndex > 0 ? Math.min(league.relegate, inBucket.length - promoted) : 0;
      buckets.set(
        `silver-${i / league.bucketSize + 1}`,
        inBucket.map((m, r) => ({
          ...m,
          rank: r + 1,
          zone: r < promoted ? 'promote' : r >= inBucket.length - relegated ? 'relegate' : null,
        })),
      );
    }
    expect([...buckets.keys()]).toEqual(['silver-1', 'silver-2', 'silver-3']);
    const shown = (name: string) =>
      buckets.get(name)!.map((m) => [String(m.rank), m.member, String(m.score), m.zone ?? '']);
    const bucketRows = async () =>
      (await rowsOf(page.getByRole('table', { name: 'League bucket' }))).map((r) => [r[0]!, r[1]!, r[3]!, r[4]!]);

    await go('/standings/ladder');
    const panel = page.getByRole('region', { name: 'League buckets' });
    // Opens on the start tier's first bucket.
    await expect.poll(bucketRows).toEqual(shown('silver-1'));
    await panel.getByLabel('Bucket number').fill('2');
    await panel.getByRole('button', { name: 'Show bucket' }).click();
    await expect.poll(bucketRows).toEqual(shown('silver-2'));
    await panel.getByRole('button', { name: 'Next bucket' }).click();
    await expect.poll(bucketRows).toEqual(shown('silver-3'));
    // Past the last filled bucket: empty, and no further step.
    await panel.getByRole('button', { name: 'Next bucket' }).click();
    await panel.getByText('No one in this bucket.').waitFor();
    expect(await panel.getByRole('button', { name: 'Next bucket' }).isDisabled()).toBe(true);
    await panel.getByRole('button', { name: 'Previous bucket' }).click();
    await expect.poll(bucketRows).toEqual(shown('silver-3'));
    await panel.getByLabel('Tier').selectOption('gold');
    await panel.getByLabel('Bucket number').fill('1');
    await panel.getByRole('button', { name: 'Show bucket' }).click();
    await panel.getByText('No one in this bucket.').waitFor();

    // A bucket number the API refuses: its message, with the picker still there.
    await panel.getByLabel('Bucket number').fill('x');
    await panel.getByRole('button', { name: 'Show bucket' }).click();
    const refused = await h.api('GET', '/v1/boards/ladder/league/gold-x');
    expect(refused.status).toBe(404);
    await expect.poll(() => panel.getByRole('alert').textContent()).toBe(`404 ${refused.body.message}`);
    expect(await panel.getByLabel('Tier').inputValue()).toBe('gold');

    // Finding a member opens their bucket, with them marked.
    const sought = buckets.get('silver-2')![0]!;
    await page.getByLabel('Member id').fill(sought.member);
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await expect.poll(bucketRows).toEqual(shown('silver-2'));
    await panel.getByText(`${sought.member}: rank 1 of 3 in silver-2`).waitFor();
    expect(await panel.locator('mark').textContent()).toBe(sought.member);
    await shot('league');

    // The member page: placement this period, then the tier the close earns.
    const nextTier = { promote: 'gold', relegate: 'bronze' } as const;
    const checked = [sought, buckets.get('silver-3')![1]!, buckets.get('silver-1')![1]!];
    expect(checked.map((m) => m.zone)).toEqual(['promote', 'relegate', null]);
    for (const m of checked) {
      const bucket = [...buckets].find(([, list]) => list.includes(m))![0];
      await go(`/members/${m.member}`);
      await expect
        .poll(async () => (await rowsOf(page.getByRole('table', { name: 'League placements' })))[0])
        .toEqual([
          'ladder',
          '2026-12-03',
          'silver',
          bucket,
          `${m.rank} of ${buckets.get(bucket)!.length}`,
          m.zone ?? '',
          'silver',
        ]);
      if (m === sought) await shot('league-member');
    }
    // The placement's bucket (here the last member's, silver-1) opens in the explorer with the member marked.
    await page.getByRole('table', { name: 'League placements' }).getByRole('link', { name: 'silver-1' }).click();
    await expect.poll(bucketRows).toEqual(shown('silver-1'));
    expect(await page.getByRole('region', { name: 'League buckets' }).locator('mark').textContent()).toBe(
      checked[2]!.member,
    );
    h.clock.set('2026-12-04T00:05:00Z');
    expect((await runTick(h.ctx)).closed).toContain('ladder/2026-12-03');
    for (const m of checked) {
      const next = m.zone ? nextTier[m.zone as 'promote' | 'relegate'] : 'silver';
      await go(`/members/${m.member}`);
      await expect
        .poll(async () => (await rowsOf(page.getByRole('table', { name: 'League placements' })))[0])
        .toEqual(['ladder', '2026-12-04', next, 'not placed yet', '—', '—', next]);
    }
    // The closed day's buckets stay browsable through the period picker.
    await go('/standings/ladder?period=2026-12-03&bucket=silver-3');
    await expect.poll(bucketRows).toEqual(shown('silver-3'));
  });

  it('closes an open period now after a confirmation; a second close is refused with the API message', async () => {
    // 2026-12-04 00:05 (where the league test left the clock): the sprint's day has begun.
    expect(
      (await h.api('PUT', '/v1/boards/sprint', { aggregation: 'sum', period: 'day', graceSeconds: 0 })).status,
    ).toBe(201);
    await post([
      { board: 'sprint', member: 's-ann', value: 4, occurredAt: '2026-12-04T00:01:00Z', idempotencyKey: 'sprint-1' },
      { board: 'sprint', member: 's-bob', value: 9, occurredAt: '2026-12-04T00:02:00Z', idempotencyKey: 'sprint-2' },
    ]);
    const key = '2026-12-04';
    const rowIn = (on: Page) => on.getByRole('table', { name: 'Periods' }).locator('tbody tr', { hasText: key });
    const stateIn = async (on: Page) =>
      (await rowsOf(on.getByRole('table', { name: 'Periods' }))).find((r) => r[0] === key);

    // A second operator's tab, loaded before the close: its table goes stale.
    const other = await page.context().newPage();
    other.on('pageerror', (err) => pageErrors.push(err.message));
    await other.goto(`${h.baseUrl}/console/#/periods/sprint`);
    await other.getByLabel('Admin key').fill(ADMIN_KEY);
    await other.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(async () => (await stateIn(other))?.[3]).toBe('open');

    await go('/periods/sprint');
    await expect.poll(async () => (await stateIn(page))?.[3]).toBe('open');
    const dialog = page.getByRole('dialog', { name: `Close period ${key}` });
    const open = rowIn(page).getByRole('button', { name: 'Close now' });
    // Cancel sends nothing; a mistyped key sends nothing and says why.
    await open.click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await open.click();
    await dialog.getByLabel('Reason').fill('tournament stopped early');
    await dialog.getByLabel(`Type ${key} to confirm`).fill('2026-12-05');
    await dialog.getByRole('button', { name: 'Close period' }).click();
    await expect
      .poll(() => dialog.getByRole('alert').textContent())
      .toBe('type the period key exactly to confirm the close');
    const periodOf = async () =>
      (await h.api('GET', '/v1/boards/sprint/periods')).body.periods.find((p: { key: string }) => p.key === key);
    expect((await periodOf()).state).toBe('open');
    await shot('period-close');

    await dialog.getByLabel(`Type ${key} to confirm`).fill(key);
    await dialog.getByRole('button', { name: 'Close period' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // The table is read again until the close is done: the end is the moment asked.
    await expect
      .poll(async () => (await stateIn(page))?.slice(1, 4), { timeout: 30_000 })
      .toEqual(['2026-12-04 00:00:00Z', '2026-12-04 00:05:00Z', 'closed']);
    expect(await periodOf()).toMatchObject({ state: 'closed', endsAt: '2026-12-04T00:05:00.000Z' });
    expect(await rowIn(page).getByRole('button', { name: 'Close now' }).count()).toBe(0);
    await rowIn(page).getByRole('link', { name: 'Results and awards' }).waitFor();

    // The stale tab still offers the close: the API refuses it and the tab shows why, then what is now.
    const staleDialog = other.getByRole('dialog', { name: `Close period ${key}` });
    await rowIn(other).getByRole('button', { name: 'Close now' }).click();
    await staleDialog.getByLabel('Reason').fill('tournament stopped early');
    await staleDialog.getByLabel(`Type ${key} to confirm`).fill(key);
    await staleDialog.getByRole('button', { name: 'Close period' }).click();
    const again = await h.api('POST', `/v1/boards/sprint/periods/${key}/close`, { reason: 'again' });
    expect(again.status).toBe(409);
    await expect
      .poll(() => staleDialog.getByRole('alert').textContent())
      .toBe(
        `409 ${again.body.message}${again.body.details.map((d: { path: string; message: string }) => `${d.path}: ${d.message}`).join('')}`,
      );
    await expect.poll(async () => (await stateIn(other))?.[3]).toBe('closed');
    await other.close();
  });

  it('removes a member from one board period after a confirmation; the other boards keep them', async () => {
    const member = MEMBERS[29]!;
    await post([
      { board: 'arena', member: member.member, value: 7, idempotencyKey: `arena-${member.member}-b` },
      { board: 'arena-weekly', member: member.member, value: 2, idempotencyKey: `weekly-${member.member}` },
    ]);
    const rankOn = async (board: string) =>
      (await h.api('GET', `/v1/boards/${board}/standings/${member.member}`)).body.rank;
    expect(await rankOn('arena')).not.toBeNull();
    await go(`/members/${member.member}`);
    const boards = page.getByRole('table', { name: 'Member standings' });
    const rowOn = async (board: string) => (await rowsOf(boards)).find((r) => r[0] === board);
    await expect.poll(async () => (await rowOn('arena'))?.[3]).toBe(String(member.value));
    await page.getByRole('table', { name: 'Member events' }).waitFor();
    expect(await pageWidth()).toBeLessThanOrEqual(1280);

    const removal = page.getByRole('form', { name: 'Remove from a board period' });
    await removal.getByLabel('Board').selectOption('arena');
    expect(await removal.getByLabel('Period').inputValue()).toBe('current');
    await removal.getByLabel('Reason').fill('shared account');
    await removal.getByRole('button', { name: 'Remove…' }).click();
    const dialog = page.getByRole('dialog', { name: `Remove ${member.member} from a board period` });
    await dialog.getByText('arena (current)').waitFor();
    await shot('member-remove');
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // Both of the member's arena events were applied: both are voided.
    await expect
      .poll(() => page.getByRole('region', { name: 'Remove from a board period' }).getByRole('status').textContent())
      .toBe('Removed from arena all: 2 events voided.');
    await expect.poll(async () => (await rowOn('arena'))?.slice(2, 4)).toEqual(['not ranked', '—']);
    expect(await rankOn('arena')).toBeNull();
    expect((await rowOn('arena-weekly'))?.[2]).toBe(String(await rankOn('arena-weekly')));
    expect(await rankOn('arena-weekly')).not.toBeNull();
    const events = await rowsOf(page.getByRole('table', { name: 'Member events' }));
    expect(
      events
        .filter((r) => r[1] === 'arena')
        .map((r) => [r[0], r[3], r[6]])
        .sort((a, b) => a[0]!.localeCompare(b[0]!)),
    ).toEqual([
      [`arena-${member.member}`, 'voided', 'shared account'],
      [`arena-${member.member}-b`, 'voided', 'shared account'],
    ]);
    expect(events.find((r) => r[1] === 'arena-weekly')?.[3]).toBe('applied');
  });

  it('creates a key, shows it once, and revokes it', async () => {
    await go('/keys');
    await page.getByLabel('Name').fill('ops-dashboard');
    await page.getByLabel('Role').selectOption('read');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('New key');
    await shown.waitFor();
    const key = (await shown.textContent())!;
    const asKey = () => fetch(`${h.baseUrl}/v1/boards`, { headers: { authorization: `Bearer ${key}` } });
    expect((await asKey()).status).toBe(200);
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).not.toContain(key);
    await shot('keys');

    const row = page.getByRole('table', { name: 'Created keys' }).locator('tbody tr', { hasText: 'ops-dashboard' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.locator('td').nth(4).textContent()).toMatch(/^revoked /);
    expect((await asKey()).status).toBe(401);

    const revokeById = page.getByRole('form', { name: 'Revoke a key by id' });
    await revokeById.getByLabel('Key id').fill('00000000-0000-4000-8000-000000000000');
    await revokeById.getByRole('button', { name: 'Revoke' }).click();
    const unknown = await h.api('DELETE', '/v1/admin/keys/00000000-0000-4000-8000-000000000000');
    await expect.poll(() => revokeById.getByRole('alert').textContent()).toBe(`404 ${unknown.body.message}`);
  });

  it("mints a player token that reads its own member's routes and no one else's; a refused lifetime shows the API's words", async () => {
    const [own, other] = ranked(MEMBERS).map((m) => m.member);
    await go('/keys');
    const mint = page.getByRole('form', { name: 'Mint a player token' });
    await mint.getByLabel('Member').fill(own!);
    await mint.getByLabel('Lifetime (s)').fill('10');
    await mint.getByRole('button', { name: 'Mint token' }).click();
    const refused = await h.api('POST', '/v1/player-tokens', { member: own, ttlSeconds: 10 });
    expect(refused.status).toBe(400);
    await expect.poll(() => mint.getByRole('alert').textContent()).toContain(refused.body.message);

    await mint.getByLabel('Lifetime (s)').fill('600');
    await mint.getByRole('button', { name: 'Mint token' }).click();
    const shown = page.getByLabel('New player token');
    await shown.waitFor();
    const token = (await shown.textContent())!;
    const asPlayer = (member: string) =>
      fetch(`${h.baseUrl}/v1/members/${member}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await asPlayer(own!)).status).toBe(200);
    expect((await asPlayer(other!)).status).toBe(403);
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).not.toContain(token);
  });

  it('erases a member after a confirmation dialog; the member is gone from the page, the API and the standings', async () => {
    const member = ranked(MEMBERS)[4]!;
    const rankBefore = (await h.api('GET', `/v1/boards/arena/standings/${member.member}`)).body.rank;
    expect(rankBefore).toBe(6); // behind the newcomer
    const totalBefore = (await h.api('GET', '/v1/boards/arena/standings?limit=1')).body.total;
    await go(`/members/${member.member}`);
    const profile = page.getByRole('region', { name: 'Profile' });
    await expect.poll(() => fact(profile, 'Member').textContent()).toBe(member.member);

    const dialog = page.getByRole('dialog', { name: `Erase member ${member.member}` });
    const open = page.getByRole('button', { name: 'Erase member…' });
    // Cancel closes the dialog and sends nothing.
    await open.click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // A mistyped id sends nothing either, and says why.
    await open.click();
    await dialog.getByLabel(`Type ${member.member} to confirm`).fill('p01');
    await dialog.getByRole('button', { name: 'Erase member', exact: true }).click();
    await expect
      .poll(() => dialog.getByRole('alert').textContent())
      .toBe('type the member id exactly to confirm the erasure');
    expect((await h.api('GET', `/v1/members/${member.member}`)).status).toBe(200);
    await shot('member-erase');

    await dialog.getByLabel(`Type ${member.member} to confirm`).fill(member.member);
    await dialog.getByRole('button', { name: 'Erase member', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect
      .poll(() => page.getByRole('region', { name: 'Erasure' }).getByRole('status').textContent(), { timeout: 30_000 })
      .toMatch(/: done at /);
    const gone = await h.api('GET', `/v1/members/${member.member}`);
    expect(gone.status).toBe(404);
    await expect.poll(() => profile.getByRole('alert').textContent()).toBe(`404 ${gone.body.message}`);

    // The standings lost the member and everyone below moved up one.
    expect((await h.api('GET', `/v1/boards/arena/standings/${member.member}`)).body.rank).toBeNull();
    const expected = ranked([...MEMBERS, { member: 'newcomer', value: 5000 }]).filter(
      (m) => m.member !== member.member,
    );
    await go('/standings/arena');
    const standings = page.getByRole('table', { name: 'Standings' });
    await expect
      .poll(async () => (await rowsOf(standings)).slice(0, 8).map((r) => [r[0], r[1]]))
      .toEqual(expected.slice(0, 8).map((m, i) => [String(i + 1), m.member]));
    await page.getByText(`ranks 1–50 of ${totalBefore - 1}`).waitFor();
  });

  it('searches members by the start of an id or name and opens one; an exact id still opens', async () => {
    const named = [
      { id: 'fc-1', displayName: 'Falconer', region: 'DE' },
      { id: 'fc-2', displayName: 'falcon two', region: 'FR' },
      { id: 'falcon-9', displayName: 'Hawk', region: null },
      { id: 'hw-1', displayName: 'Hawkeye', region: null },
    ];
    expect((await h.api('PUT', '/v1/members', { members: named })).status).toBe(200);
    // Ids first, then names by their lower case (these are ASCII: byte order is string order).
    const q = 'falc';
    const byName = (a: (typeof named)[number], b: (typeof named)[number]) =>
      a.displayName.toLowerCase() < b.displayName.toLowerCase() ? -1 : 1;
    const expected = [
      ...named.filter((m) => m.id.startsWith(q)),
      ...named.filter((m) => !m.id.startsWith(q) && m.displayName.toLowerCase().startsWith(q)).sort(byName),
    ].map((m) => [m.id, m.displayName, m.region ?? '—', 'no']);
    expect(expected.map((r) => r[0])).toEqual(['falcon-9', 'fc-2', 'fc-1']);

    await go('/members');
    await page.getByLabel('Id or name starts with').fill(q);
    await page.getByRole('button', { name: 'Search' }).click();
    const found = page.getByRole('table', { name: 'Members found' });
    await expect.poll(() => rowsOf(found)).toEqual(expected);
    await found.getByRole('link', { name: 'fc-1' }).click();
    await page.getByRole('heading', { name: 'Member fc-1' }).waitFor();
    await expect
      .poll(() => fact(page.getByRole('region', { name: 'Profile' }), 'Display name').textContent())
      .toBe('Falconer');
    // Back to the list the URL holds, then the exact id.
    await page.goBack();
    await expect.poll(() => rowsOf(found)).toEqual(expected);
    await page.getByLabel('Member id').fill('hw-1');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'Member hw-1' }).waitFor();

    // A search the API refuses shows its words.
    const long = 'x'.repeat(65);
    const refused = await h.api('GET', `/v1/members?q=${long}`);
    expect(refused.status).toBe(400);
    await go('/members');
    await page.getByLabel('Id or name starts with').fill(long);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect
      .poll(() => page.getByRole('region', { name: 'Members found' }).getByRole('alert').textContent())
      .toBe(
        `400 ${refused.body.message}${refused.body.details.map((d: { path: string; message: string }) => `${d.path}: ${d.message}`).join('')}`,
      );
  });

  it('shows each board schedule in words, a tournament window as dates in the board time zone', async () => {
    const definitions: Record<string, Record<string, unknown>> = {
      regional: { aggregation: 'sum', period: 'week', timezone: 'Europe/Paris', regions: true },
      cup: {
        aggregation: 'best',
        period: 'all',
        timezone: 'Europe/Paris',
        graceSeconds: 600,
        window: { startsAt: '2026-12-04T17:00:00Z', endsAt: '2026-12-11T17:00:00Z' },
      },
      fridays: { aggregation: 'sum', period: { cron: '0 18 * * FRI' }, timezone: 'Europe/Paris', graceSeconds: 0 },
      fortnight: { aggregation: 'sum', period: { every: '2w', anchor: '2026-11-30T08:00:00Z' } },
    };
    for (const [id, definition] of Object.entries(definitions)) {
      expect((await h.api('PUT', `/v1/boards/${id}`, definition)).status, id).toBe(201);
    }
    // Paris is UTC+1 in December; 30 November 2026 is a Monday; grace defaults to 300 s.
    const words: Record<string, string> = {
      regional: 'Weekly, resets Monday 00:00 Europe/Paris · grace 5 min',
      cup: 'Tournament 4 Dec 2026 18:00 – 11 Dec 2026 18:00 Europe/Paris · grace 10 min',
      fridays: 'Weekly, resets Friday 18:00 Europe/Paris · no grace',
      fortnight: 'Every 2 weeks, resets Monday 08:00 UTC, from 30 Nov 2026 · grace 5 min',
      arena: 'All time, never resets',
      daily: 'Daily, resets 00:00 UTC · no grace',
    };
    await go('/boards');
    const boards = page.getByRole('table', { name: 'Boards' });
    await expect
      .poll(async () =>
        Object.fromEntries((await rowsOf(boards)).filter((r) => r[0]! in words).map((r) => [r[0], r[4]])),
      )
      .toEqual(words);
    // No definition shown as JSON anywhere in the list.
    expect((await rowsOf(boards)).flat().filter((cell) => /[{}]/.test(cell))).toEqual([]);
    await go('/boards/cup/edit');
    await page.getByRole('heading', { name: 'Edit board cup' }).waitFor();
    expect(await fact(page.locator('main'), 'Schedule').textContent()).toBe(words.cup);
  });

  it('picks the region from those ranked in the period in view, world first', async () => {
    const players = [
      { id: 'rg-1', region: 'FR', value: 40 },
      { id: 'rg-2', region: 'FR', value: 70 },
      { id: 'rg-3', region: 'DE', value: 55 },
      { id: 'rg-4', region: 'JP', value: 10 },
      { id: 'rg-5', region: null, value: 90 },
    ];
    expect(
      (await h.api('PUT', '/v1/members', { members: players.map(({ id, region }) => ({ id, region })) })).status,
    ).toBe(200);
    await post(players.map((p) => ({ board: 'regional', member: p.id, value: p.value, idempotencyKey: `rg-${p.id}` })));
    const regions = [...new Set(players.flatMap((p) => (p.region ? [p.region] : [])))].sort();
    expect(regions).toEqual(['DE', 'FR', 'JP']);

    await go('/standings/regional');
    const scopeForm = page.getByRole('form', { name: 'Scope' });
    const region = scopeForm.getByLabel('Region');
    await expect.poll(() => region.locator('option').allTextContents()).toEqual(['world', ...regions]);
    expect(await region.evaluate((el: any) => String(el.tagName))).toBe('SELECT');
    await region.selectOption('FR');
    await scopeForm.getByRole('button', { name: 'Show' }).click();
    const standings = page.getByRole('table', { name: 'Standings' });
    const french = players.filter((p) => p.region === 'FR').sort((a, b) => b.value - a.value);
    await expect
      .poll(async () => (await rowsOf(standings)).map((r) => [r[0], r[1], r[3]]))
      .toEqual(french.map((p, i) => [String(i + 1), p.id, String(p.value)]));
    expect(new URL(page.url()).hash).toContain('region=FR');
    expect(await region.inputValue()).toBe('FR');
    expect(await pageWidth()).toBeLessThanOrEqual(1280);

    // A region from the URL that the period does not list stays selected, after the listed ones.
    await go('/standings/regional?region=QQ');
    await expect.poll(() => region.locator('option').allTextContents()).toEqual(['world', ...regions, 'QQ']);
    expect(await region.inputValue()).toBe('QQ');
    await page.getByText('no entries').waitFor();

    // A closed period's results on a board without regions: the world alone.
    await go('/periods/daily/2026-12-02');
    await expect
      .poll(() => page.getByRole('form', { name: 'Scope' }).getByLabel('Region').locator('option').allTextContents())
      .toEqual(['world']);
  });

  it('links to Bull Board, and logging out forgets the key and everything the tab remembered', async () => {
    const queues = page.getByRole('link', { name: 'Queues (Bull Board)' });
    expect(await queues.evaluate((a: any) => a.href)).toBe(`${h.baseUrl}/admin/queues`);
    expect(await page.evaluate('sessionStorage.length')).toBeGreaterThan(1); // the key, the keys and rebuilds started
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.getByRole('navigation').isHidden()).toBe(true);
  });

  it('goes back to the login with the API message when its key is revoked mid-session', async () => {
    const admin = (await h.api('POST', '/v1/admin/keys', { name: 'console-admin', role: 'admin' })).body;
    await page.evaluate('sessionStorage.clear()');
    await go('/boards');
    await page.getByLabel('Admin key').fill(admin.key);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Boards' }).waitFor();
    expect((await h.api('DELETE', `/v1/admin/keys/${admin.id}`)).status).toBe(204);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('link', { name: 'Boards', exact: true }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('401 unknown or revoked API key');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('ran without a script error or a content security policy violation', () => {
    expect({ pageErrors, violations }).toEqual({ pageErrors: [], violations: [] });
  });

  it('sent every API call with a bearer key and no cookie, and read standings a bounded page at a time', () => {
    expect(apiCalls.filter((c) => !/^Bearer \S+$/.test(c.authorization ?? '') || c.cookie !== undefined)).toEqual([]);
    const pages = apiCalls.filter((c) =>
      /^\/v1\/boards\/[^/]+\/(standings|periods\/[^/]+\/results)$/.test(c.url.pathname),
    );
    expect(pages.length).toBeGreaterThan(5);
    const unbounded = pages
      .map((c) => c.url)
      .filter((url) => !(Number(url.searchParams.get('limit')) >= 1 && Number(url.searchParams.get('limit')) <= 200));
    expect(unbounded.map((url) => url.pathname + url.search)).toEqual([]);
  });
});
