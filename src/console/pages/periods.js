import { api, seg } from '../api.js';
import { button, field, form, h, input, link, select, table, time, boardField } from '../dom.js';
import { entriesTable, scopeLine } from './standings.js';

export async function periodsPage({ params, navigate }) {
  const { boards } = await api('GET', '/v1/boards');
  const boardId = params[0] ?? boards[0]?.id;
  const picker = form(
    { 'aria-label': 'Pick a board', class: 'inline' },
    [boardField(boards, boardId)],
    'Show',
    ({ board }) => navigate(`/periods/${seg(board)}`),
  );
  if (!boardId) return h('div', {}, h('h1', {}, 'Periods'), h('p', { class: 'empty' }, 'No boards yet.'));
  const { periods } = await api('GET', `/v1/boards/${seg(boardId)}/periods`);
  return h(
    'div',
    {},
    h('h1', {}, `Periods of ${boardId}`),
    picker,
    table(
      ['Period', 'Starts', 'Ends', 'State', ''],
      periods.map((p) => [
        p.key,
        time(p.startsAt),
        time(p.endsAt),
        p.state,
        p.state === 'closed'
          ? link(`#/periods/${seg(boardId)}/${seg(p.key)}`, 'Results and awards')
          : link(`#/standings/${seg(boardId)}?period=${seg(p.key)}`, 'Standings'),
      ]),
      { label: 'Periods', empty: 'No periods yet: a period starts with its first event.' },
    ),
  );
}

const PAGE = 100;

/** A closed period's final standings and awards, a page at a time; reports are the members' notifications. */
export async function resultsPage({ params, query, navigate }) {
  const [boardId, key] = params;
  const board = await api('GET', `/v1/boards/${seg(boardId)}`);
  const scope = { category: query.category || 'all', region: query.region || 'world' };
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const results = await api('GET', `/v1/boards/${seg(boardId)}/periods/${seg(key)}/results`, {
    query: { ...scope, limit: PAGE, offset },
  });
  const go = (changes) => navigate(`/periods/${seg(boardId)}/${seg(key)}`, { ...scope, offset, ...changes });
  return h(
    'div',
    {},
    h('h1', {}, `Results of ${boardId} ${key}`),
    h('p', {}, link(`#/periods/${seg(boardId)}`, 'All periods')),
    form(
      { 'aria-label': 'Scope', class: 'inline' },
      [
        field('Category', select('category', ['all', ...board.categories], scope.category)),
        field('Region', input('region', { value: scope.region, size: 8 })),
      ],
      'Show',
      (v) => go({ category: v.category, region: v.region.trim(), offset: 0 }),
    ),
    h('p', { class: 'scope' }, scopeLine(results)),
    h(
      'div',
      { class: 'pager' },
      button('Previous', () => go({ offset: Math.max(0, offset - PAGE) }), { disabled: offset === 0 }),
      h(
        'span',
        {},
        results.total === 0
          ? 'no entries'
          : `ranks ${offset + 1}–${Math.min(offset + PAGE, results.total)} of ${results.total}`,
      ),
      button('Next', () => go({ offset: offset + PAGE }), { disabled: offset + PAGE >= results.total }),
    ),
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        { class: 'panel', 'aria-label': 'Final standings' },
        h('h2', {}, 'Final standings'),
        entriesTable(results.entries, 'Final standings'),
      ),
      h(
        'section',
        { class: 'panel', 'aria-label': 'Awards' },
        h('h2', {}, 'Awards'),
        table(
          ['Member', 'Award', 'Rank'],
          results.awards.map((a) => [link(`#/members/${seg(a.member)}`, a.member), a.award, String(a.rank)]),
          { label: 'Awards', empty: 'No awards in this scope.' },
        ),
        h('p', {}, 'Each ranked member’s period report is in their notifications (member page).'),
      ),
    ),
  );
}
