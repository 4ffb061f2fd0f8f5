import { api, followStream, seg } from '../api.js';
import { button, errorBox, facts, field, form, h, input, link, panel, select, table, boardField } from '../dom.js';

/** SPEC §5's largest page: a board is only ever read a page at a time, whatever its size. */
const PAGE_SIZES = [25, 50, 100, 200];

const memberLink = (member) => link(`#/members/${seg(member)}`, member);
const entryRows = (entries, highlight) =>
  entries.map((e) => [String(e.rank), e.member === highlight ? h('mark', {}, memberLink(e.member)) : memberLink(e.member), e.displayName, String(e.score)]);
export const entriesTable = (entries, label, highlight) =>
  table(['Rank', 'Member', 'Name', 'Score'], entryRows(entries, highlight), { label, empty: 'No one is ranked here.' });

export const scopeLine = (answer) =>
  `${answer.total} ranked · period ${answer.period.key} (${answer.period.state}) · ${answer.category} / ${answer.region}${answer.source ? ` · from ${answer.source}` : ''}`;

async function pickBoard(navigate) {
  const { boards } = await api('GET', '/v1/boards');
  return h(
    'div',
    {},
    h('h1', {}, 'Standings'),
    form(
      { 'aria-label': 'Pick a board' },
      [
        field(
          'Board',
          select(
            'board',
            boards.map((b) => [b.id, b.displayName]),
          ),
        ),
      ],
      'Show',
      ({ board }) => navigate(`/standings/${seg(board)}`),
    ),
  );
}

export async function standingsPage({ params, query, signal, navigate }) {
  if (!params[0]) return pickBoard(navigate);
  const boardId = params[0];
  const [board, { boards }, periods] = await Promise.all([
    api('GET', `/v1/boards/${seg(boardId)}`),
    api('GET', '/v1/boards'),
    api('GET', `/v1/boards/${seg(boardId)}/periods`).catch(() => ({ periods: [] })),
  ]);
  const scope = { period: query.period || 'current', category: query.category || 'all', region: query.region || 'world' };
  const limit = PAGE_SIZES.includes(Number(query.limit)) ? Number(query.limit) : 50;
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const go = (changes) => navigate(`/standings/${seg(boardId)}`, { ...scope, limit, offset, member: query.member, bucket: query.bucket, ...changes });
  const base = `/v1/boards/${seg(boardId)}/standings`;

  const scopeForm = form(
    { 'aria-label': 'Scope', class: 'inline' },
    [
      boardField(boards, boardId),
      field('Period', select('period', [['current', 'current'], ...periods.periods.map((p) => [p.key, `${p.key} (${p.state})`])], scope.period)),
      field('Category', select('category', ['all', ...board.categories], scope.category)),
      field('Region', input('region', { value: scope.region, size: 8 })),
      field('Page size', select('limit', PAGE_SIZES.map(String), String(limit))),
    ],
    'Show',
    (v) =>
      v.board === boardId
        ? go({ period: v.period, category: v.category, region: v.region.trim(), limit: v.limit, offset: 0 })
        : navigate(`/standings/${seg(v.board)}`, { limit: v.limit }),
  );

  const pagePanel = panel('Standings page', async () => {
    const page = await api('GET', base, { query: { ...scope, limit, offset }, signal });
    const last = Math.max(0, Math.floor((page.total - 1) / limit) * limit);
    return h(
      'div',
      {},
      h('p', { class: 'scope' }, scopeLine(page)),
      h(
        'div',
        { class: 'pager' },
        button('First', () => go({ offset: 0 }), { disabled: offset === 0 }),
        button('Previous', () => go({ offset: Math.max(0, offset - limit) }), { disabled: offset === 0 }),
        h('span', {}, page.total === 0 ? 'no entries' : `ranks ${offset + 1}–${Math.min(offset + limit, page.total)} of ${page.total}`),
        button('Next', () => go({ offset: offset + limit }), { disabled: offset + limit >= page.total }),
        button('Last', () => go({ offset: last }), { disabled: offset >= last }),
        form({ 'aria-label': 'Go to rank', class: 'inline' }, [field('Go to rank', input('rank', { size: 8, inputmode: 'numeric' }))], 'Go', ({ rank }) => {
          const n = Number.parseInt(rank, 10);
          go({ offset: Number.isFinite(n) && n > 0 ? Math.floor((n - 1) / limit) * limit : 0 });
        }),
      ),
      entriesTable(page.entries, 'Standings', query.member),
    );
  });

  const memberPanel = panel('Find a member', async () => {
    const finder = form({ 'aria-label': 'Find a member', class: 'inline' }, [field('Member id', input('member', { value: query.member ?? '' }))], 'Find', ({ member }) =>
      go({ member: member.trim() }),
    );
    if (!query.member) return finder;
    const member = query.member;
    const [standing, around] = await Promise.all([
      api('GET', `${base}/${seg(member)}`, { query: scope, signal }),
      api('GET', `${base}/${seg(member)}/around`, { query: { ...scope, radius: 5 }, signal }),
    ]);
    const live = h('p', { class: 'live' });
    const standingFacts = h('div', {}, memberFacts(standing));
    followStream(
      `${base}/${seg(member)}/stream`,
      scope,
      signal,
      (event, data) => {
        if (event === 'standing') {
          standingFacts.replaceChildren(memberFacts(JSON.parse(data)));
          live.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
        } else if (event === 'closed') live.textContent = 'the period closed: final standing';
      },
      (err) => live.replaceChildren(errorBox(err)),
    );
    return h(
      'div',
      {},
      finder,
      h('h3', {}, 'Member ', memberLink(member)),
      standingFacts,
      live,
      standing.rank !== null ? button('Show their page of the standings', () => go({ offset: Math.floor((standing.rank - 1) / limit) * limit })) : null,
      h('h3', {}, 'Around'),
      entriesTable(around.entries, 'Around the member', member),
    );
  });

  const livePanel = panel('Live top 10', async () => {
    const status = h('p', { class: 'live' }, 'connecting…');
    const holder = h('div', {});
    followStream(
      `${base}/stream`,
      { ...scope, limit: 10 },
      signal,
      (event, data) => {
        const body = JSON.parse(data);
        if (event === 'top') {
          holder.replaceChildren(h('p', { class: 'scope' }, scopeLine(body)), entriesTable(body.entries, 'Live top 10'));
          status.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
        } else if (event === 'unavailable') status.textContent = body.message;
        else if (event === 'closed') status.textContent = 'the period closed: final standings';
      },
      (err) => status.replaceChildren(errorBox(err)),
    );
    return h('div', {}, status, holder);
  });

  return h(
    'div',
    {},
    h('h1', {}, `Standings: ${board.displayName}`),
    h('p', {}, link(`#/boards/${seg(boardId)}/edit`, 'Edit board'), ' · ', link(`#/periods/${seg(boardId)}`, 'Periods')),
    scopeForm,
    h('div', { class: 'columns' }, h('div', {}, pagePanel), h('div', {}, memberPanel, board.league ? leaguePanel(board, scope, query, go, signal) : null, livePanel)),
  );
}

export const memberFacts = (s) =>
  facts([
    ['Rank', s.rank === null ? 'not ranked' : String(s.rank)],
    ['Score', s.score === null ? '—' : String(s.score)],
    ['Of', String(s.total)],
    ['Percentile', s.percentile === null ? '—' : String(s.percentile)],
    ['Top percent', s.topPercent === null ? '—' : `${s.topPercent}%`],
  ]);

/** SPEC §9.2 league buckets: a bucket by name, or the searched member's bucket. */
function leaguePanel(board, scope, query, go, signal) {
  return panel('League buckets', async () => {
    const finder = form(
      { 'aria-label': 'League bucket', class: 'inline' },
      [field('Bucket', input('bucket', { value: query.bucket ?? '', placeholder: `${board.league.tiers[0]}-1` }))],
      'Show',
      ({ bucket }) => go({ bucket: bucket.trim() }),
    );
    const path = query.bucket
      ? `/v1/boards/${seg(board.id)}/league/${seg(query.bucket)}`
      : query.member
        ? `/v1/boards/${seg(board.id)}/standings/${seg(query.member)}/league`
        : null;
    if (!path) return h('div', {}, finder, h('p', {}, `Tiers: ${board.league.tiers.join(', ')}`));
    const league = await api('GET', path, { query: { period: scope.period }, signal });
    return h(
      'div',
      {},
      finder,
      facts([
        ['Tier', league.tier],
        ['Bucket', league.bucket ?? 'not placed yet'],
        ['Rank', league.rank === null ? '—' : String(league.rank)],
        ['Members', String(league.total)],
      ]),
      table(
        ['Rank', 'Member', 'Name', 'Score', 'Zone'],
        league.entries.map((e) => [String(e.rank), memberLink(e.member), e.displayName, String(e.score), e.zone ?? '']),
        { label: 'League bucket', empty: 'No one in this bucket.' },
      ),
    );
  });
}
