import { api, seg } from '../api.js';
import { zoneCell } from './standings.js';
import { button, errorBox, facts, field, form, h, input, link, notice, panel, table, tableRow, time } from '../dom.js';

/** The API's largest search answer is 100; a page of 50 leaves the operator to type more. */
const SEARCH_LIMIT = 50;

/**
 * Finds members by the start of their id or display name (`GET /v1/members?q=`), the query in
 * the URL so a reload or Back shows the same list; or opens a member by their exact id.
 */
export function membersPage({ query, navigate, signal }) {
  const q = query.q ?? '';
  return h(
    'div',
    {},
    h('h1', {}, 'Members'),
    form(
      { 'aria-label': 'Search members', class: 'inline' },
      [field('Id or name starts with', input('q', { value: q, size: 30, autocomplete: 'off' }))],
      'Search',
      ({ q: typed }) => navigate('/members', { q: String(typed).trim() }),
    ),
    q ? panel('Members found', () => searchResults(q, signal)) : null,
    form(
      { 'aria-label': 'Find a member' },
      [field('Member id', input('member', { required: true }))],
      'Open',
      ({ member }) => navigate(`/members/${seg(member.trim())}`),
    ),
  );
}

async function searchResults(q, signal) {
  const { members } = await api('GET', '/v1/members', { query: { q, limit: SEARCH_LIMIT }, signal });
  return h(
    'div',
    {},
    table(
      ['Member', 'Name', 'Region', 'Excluded'],
      members.map((m) => [link(`#/members/${seg(m.id)}`, m.id), m.displayName, m.region, m.excluded ? 'yes' : 'no']),
      { label: 'Members found', empty: `No member's id or name starts with "${q}".` },
    ),
    members.length === SEARCH_LIMIT
      ? h('p', { class: 'scope' }, `The first ${SEARCH_LIMIT}: type more of the id or name to narrow them.`)
      : null,
  );
}

const boardLink = (board) => link(`#/standings/${seg(board)}`, board);

export function memberPage({ params, signal }) {
  const member = params[0];
  const path = `/v1/members/${seg(member)}`;
  const refreshAll = () => {
    for (const p of panels) p.dispatchEvent(new Event('refresh'));
  };

  const profile = reloadable('Profile', async () => {
    const m = await api('GET', path, { signal });
    return h(
      'div',
      {},
      facts([
        ['Member', m.member],
        ['Display name', m.displayName],
        ['Region', m.region],
        ['Excluded', m.excluded ? 'yes' : 'no'],
      ]),
      m.excluded
        ? form(
            { 'aria-label': 'Restore', class: 'inline' },
            [field('Reason (optional)', input('reason', { size: 40 }))],
            'Restore',
            async ({ reason }) => {
              // No reason, no body: the API records the restore without one.
              const text = String(reason ?? '').trim();
              await api('DELETE', `${path}/exclusion`, text ? { body: { reason: text } } : {});
              refreshAll();
            },
          )
        : form(
            { 'aria-label': 'Exclude', class: 'inline' },
            [field('Reason', input('reason', { size: 40 }))],
            'Exclude',
            async ({ reason }) => {
              await api('POST', `${path}/exclusion`, { body: { reason } });
              refreshAll();
            },
          ),
      m.exclusions?.length
        ? table(
            ['Reason', 'Excluded by', 'Excluded at', 'Restored by', 'Restored at', 'Restore reason'],
            m.exclusions.map((x) => [
              x.reason,
              x.excludedBy,
              time(x.excludedAt),
              x.restoredBy,
              x.restoredAt ? time(x.restoredAt) : null,
              x.restoreReason,
            ]),
            { label: 'Exclusions' },
          )
        : null,
    );
  });

  const standings = reloadable('Standings on every board', async () => {
    const [{ standings: rows }, { excluded }] = await Promise.all([
      api('GET', `${path}/standings`, { signal }),
      api('GET', path, { signal }),
    ]);
    // An excluded member has no rank anywhere: say why rather than leave it to be guessed.
    const unranked = excluded ? 'excluded' : 'not ranked';
    return table(
      ['Board', 'Period', 'Rank', 'Score', 'Of', 'Top'],
      rows.map((s) => [
        boardLink(s.board),
        s.period.key,
        s.rank === null ? unranked : String(s.rank),
        s.score === null ? null : String(s.score),
        String(s.total),
        topCell(s.topPercent),
      ]),
      { label: 'Member standings', empty: 'No boards.' },
    );
  });

  const events = reloadable('Events', async () => {
    const result = h('div', {});
    const lookup = form(
      { 'aria-label': 'Look up an event', class: 'inline' },
      [
        field('Idempotency key', input('key', { size: 30 })),
        // Keys are per board: the board is needed only when the key is on more than one.
        field('Board (when the key is on several)', input('board', { size: 16 })),
      ],
      'Look up',
      async ({ key, board }) => {
        const query = board.trim() ? { board: board.trim() } : undefined;
        result.replaceChildren(eventCard(await api('GET', `/v1/events/${seg(key.trim())}`, { query }), refreshAll));
      },
    );
    const listed = h('div', {});
    const columns = ['Key', 'Board', 'Period', 'Status', 'Value', 'Occurred', 'Reason', ''];
    const rowsOf = (list) =>
      list.map((e) => [
        e.idempotencyKey,
        e.board,
        e.period,
        e.status,
        e.value === null ? null : String(e.value),
        time(e.occurredAt),
        e.reason,
        e.status === 'applied' ? voidForm(e.idempotencyKey, e.board, refreshAll) : null,
      ]);
    // Newest first, a page at a time: `nextCursor` pages on (docs/api.md).
    const more = async (cursor) => {
      const page = await api('GET', `${path}/events`, { query: { limit: 50, cursor }, signal });
      return { rows: rowsOf(page.events), next: page.nextCursor };
    };
    try {
      const first = await more(undefined);
      const shown = table(columns, first.rows, { label: 'Member events', empty: 'No events.' });
      listed.append(shown);
      let next = first.next;
      const older = button(
        'Older events',
        async () => {
          try {
            const page = await more(next);
            shown.querySelector('tbody')?.append(...page.rows.map(tableRow));
            next = page.next;
            older.hidden = next === null;
          } catch (err) {
            listed.append(errorBox(err));
          }
        },
        { hidden: next === null },
      );
      listed.append(older);
    } catch (err) {
      // Not every deployment lists a member's events yet; the lookup by key still works.
      listed.append(errorBox(err));
    }
    return h('div', {}, listed, lookup, result);
  });

  // Leagues: where the member plays this period on each league board, and the tier they
  // play in next (the tier the last close earned them; a member new to a board starts in
  // its start tier).
  const leagues = reloadable('Leagues', async () => {
    const [{ leagues: boards }, { excluded }] = await Promise.all([
      api('GET', `${path}/leagues`, { signal }),
      api('GET', path, { signal }),
    ]);
    const placements = await Promise.all(
      boards.map((l) => api('GET', `/v1/boards/${seg(l.board)}/standings/${seg(member)}/league`, { signal })),
    );
    return table(
      ['Board', 'Period', 'Tier', 'Bucket', 'Rank', 'Zone', 'Next tier'],
      boards.map((l, i) => {
        const p = placements[i];
        const own = p.entries.find((e) => e.member === member);
        return [
          boardLink(l.board),
          p.period.key,
          p.tier,
          p.bucket
            ? link(
                `#/standings/${seg(l.board)}?${new URLSearchParams({ period: p.period.key, bucket: p.bucket, member })}`,
                p.bucket,
              )
            : 'not placed yet',
          p.rank !== null ? `${p.rank} of ${p.total}` : excluded ? 'excluded' : null,
          own ? zoneCell(own.zone) : null,
          l.tier,
        ];
      }),
      { label: 'League placements', empty: 'No league boards.' },
    );
  });

  const awards = reloadable('Awards', async () => {
    const { awards: rows } = await api('GET', `${path}/awards`, { signal });
    return table(
      ['Board', 'Period', 'Scope', 'Award', 'Rank', 'Granted'],
      rows.map((a) => [
        boardLink(a.board),
        a.period,
        `${a.category} / ${a.region}`,
        a.award,
        String(a.rank),
        time(a.grantedAt),
      ]),
      { label: 'Awards', empty: 'No awards.' },
    );
  });

  const notifications = reloadable('Notifications', async () => {
    const { notifications: rows } = await api('GET', `${path}/notifications`, { query: { limit: 50 }, signal });
    return table(
      ['When', 'Kind', 'Board', 'Period', 'Title', 'Body', 'Award'],
      rows.map((n) => [time(n.createdAt), n.kind, n.board, n.period, n.title, n.body, n.award]),
      { label: 'Notifications', empty: 'No notifications.' },
    );
  });

  const erasure = panel('Erasure', async () => {
    const status = h('div', {});
    const confirm = input('confirm', { size: 30, autocomplete: 'off' });
    const dialog = h('dialog', { 'aria-label': `Erase member ${member}` });
    const close = () => {
      confirm.value = '';
      dialog.close();
    };
    dialog.append(
      h('h2', {}, `Erase ${member}?`),
      h('p', {}, 'Erasing removes the member, their events, awards and notifications everywhere. It cannot be undone.'),
      form(
        { 'aria-label': 'Erase member', class: 'danger' },
        [field(`Type ${member} to confirm`, confirm)],
        'Erase member',
        async ({ confirm: typed }) => {
          if (typed !== member)
            throw Object.assign(new Error('type the member id exactly to confirm the erasure'), { details: [] });
          const { erasureId } = await api('DELETE', path);
          close();
          await followErasure(erasureId, status, signal);
          // What is left to show of an erased member is the API's 404 in each part.
          refreshAll();
        },
      ),
      h('div', { class: 'actions' }, button('Cancel', close)),
    );
    return h(
      'div',
      {},
      h('p', {}, 'Erasing removes the member everywhere. It cannot be undone.'),
      button('Erase member…', () => dialog.showModal(), { class: 'danger' }),
      dialog,
      status,
    );
  });

  const removal = panel('Remove from a board period', () => removalForm(member, signal, refreshAll));

  const panels = [profile, standings, leagues, events, awards, notifications];
  return h(
    'div',
    {},
    h('h1', {}, `Member ${member}`),
    h(
      'div',
      { class: 'columns' },
      h('div', {}, profile, events, removal, erasure),
      h('div', {}, standings, leagues, awards, notifications),
    ),
  );
}

/**
 * Voids every applied event of the member in one board period (the API's removal). The boards
 * where the member has a score come first, as the likely ones; the others follow, since a
 * member may have events on a board where they hold no score (all voided, or excluded).
 */
async function removalForm(member, signal, done) {
  const [{ boards }, { standings }] = await Promise.all([
    api('GET', '/v1/boards', { signal }),
    api('GET', `/v1/members/${seg(member)}/standings`, { signal }),
  ]);
  const scored = new Set(standings.filter((s) => s.score !== null).map((s) => s.board));
  const options = (list) => list.map((b) => h('option', { value: b.id }, b.id));
  const board = h(
    'select',
    { name: 'board' },
    h('optgroup', { label: 'With a score' }, options(boards.filter((b) => scored.has(b.id)))),
    h('optgroup', { label: 'Other boards' }, options(boards.filter((b) => !scored.has(b.id)))),
  );
  const status = h('div', {});
  const dialog = h('dialog', { 'aria-label': `Remove ${member} from a board period` });
  const question = h('p', {});
  let asked = null;
  dialog.append(
    h('h2', {}, `Remove ${member}?`),
    question,
    form({ 'aria-label': 'Confirm the removal', class: 'danger' }, [], 'Remove member', async () => {
      const { board: id, period, reason } = asked;
      const removed = await api('DELETE', `/v1/boards/${seg(id)}/members/${seg(member)}`, {
        query: { period },
        body: { reason },
      });
      dialog.close();
      status.replaceChildren(
        notice(
          `Removed from ${removed.board} ${removed.period}: ${removed.voided} ${removed.voided === 1 ? 'event' : 'events'} voided.`,
        ),
      );
      done();
    }),
    h(
      'div',
      { class: 'actions' },
      button('Cancel', () => dialog.close()),
    ),
  );
  dialog.addEventListener('close', () => dialog.querySelector('.form-errors')?.replaceChildren());
  return h(
    'div',
    {},
    h(
      'p',
      {},
      'Voids every applied event of the member in one period of one board; other boards and periods keep theirs.',
    ),
    form(
      { 'aria-label': 'Remove from a board period', class: 'inline' },
      [
        field('Board', board),
        field('Period', input('period', { value: 'current', size: 12 }), 'current or a period key'),
        field('Reason', input('reason', { size: 24 })),
      ],
      'Remove…',
      (values) => {
        asked = { board: values.board, period: String(values.period).trim() || 'current', reason: values.reason };
        question.textContent = `Every applied event of ${member} in ${asked.board} (${asked.period}) will be voided. Reason: ${asked.reason || '(none)'}.`;
        status.replaceChildren();
        dialog.showModal();
      },
    ),
    dialog,
    status,
  );
}

const topCell = (topPercent) => (topPercent === null ? null : `Top ${topPercent}%`);

/** A panel that loads again on a `refresh` event (after an exclusion, restore or void). */
function reloadable(title, load) {
  let again = null;
  const el = panel(title, (refresh) => {
    again = refresh;
    return load(refresh);
  });
  el.addEventListener('refresh', () => again?.());
  return el;
}

/** An event is (board, key): the board is named, so a key used on two boards voids the right one. */
function voidForm(key, board, done) {
  return form(
    { 'aria-label': `Void ${key}`, class: 'inline' },
    [field('Reason', input('reason', { size: 16 }))],
    'Void',
    async ({ reason }) => {
      await api('POST', `/v1/events/${seg(key)}/void?board=${encodeURIComponent(board)}`, { body: { reason } });
      done();
    },
  );
}

function eventCard(e, done) {
  return h(
    'div',
    { class: 'card', 'aria-label': `Event ${e.idempotencyKey}` },
    facts([
      ['Key', e.idempotencyKey],
      ['Status', e.status],
      ['Board', e.board],
      ['Period', e.period],
      ['Member', e.member],
      ['Value', e.value === undefined ? null : String(e.value)],
      ['Score', e.score === null ? null : String(e.score)],
      ['Occurred', time(e.occurredAt)],
      ['Reason', e.reason ?? e.voidReason ?? null],
    ]),
    e.status === 'applied' ? voidForm(e.idempotencyKey, e.board, done) : null,
  );
}

async function followErasure(erasureId, status, signal) {
  for (;;) {
    const e = await api('GET', `/v1/admin/erasures/${seg(erasureId)}`, { signal });
    status.replaceChildren(
      notice(`Erasure ${e.erasureId}: ${e.state}${e.finishedAt ? ` at ${time(e.finishedAt)}` : ''}`),
    );
    if (e.state === 'done' || e.state === 'failed' || signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
