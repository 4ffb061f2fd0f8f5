import { api, followStream, seg } from '../api.js';
import { button, errorBox, facts, field, form, h, input, link, panel, select, table, boardField } from '../dom.js';

/** The API's largest page: a board is only ever read a page at a time, whatever its size. */
const PAGE_SIZES = [25, 50, 100, 200];

const memberLink = (member) => link(`#/members/${seg(member)}`, member);
const entryRows = (entries, highlight) =>
  entries.map((e) => [
    String(e.rank),
    e.member === highlight ? h('mark', {}, memberLink(e.member)) : memberLink(e.member),
    e.displayName,
    String(e.score),
  ]);
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
  const scope = {
    period: query.period || 'current',
    category: query.category || 'all',
    region: query.region || 'world',
  };
  const [board, { boards }, periods, region] = await Promise.all([
    api('GET', `/v1/boards/${seg(boardId)}`),
    api('GET', '/v1/boards'),
    api('GET', `/v1/boards/${seg(boardId)}/periods`).catch(() => ({ periods: [] })),
    regionPicker(boardId, scope.period, scope.region, signal),
  ]);
  const limit = PAGE_SIZES.includes(Number(query.limit)) ? Number(query.limit) : 50;
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const go = (changes) =>
    navigate(`/standings/${seg(boardId)}`, {
      ...scope,
      limit,
      offset,
      member: query.member,
      bucket: query.bucket,
      ...changes,
    });
  const base = `/v1/boards/${seg(boardId)}/standings`;

  const scopeForm = form(
    { 'aria-label': 'Scope', class: 'inline' },
    [
      boardField(boards, boardId),
      field(
        'Period',
        select(
          'period',
          [['current', 'current'], ...periods.periods.map((p) => [p.key, `${p.key} (${p.state})`])],
          scope.period,
          // Another period has other regions: the picker follows the period picked.
          { onchange: (event) => void region.load(event.target.value) },
        ),
      ),
      field('Category', select('category', ['all', ...board.categories], scope.category)),
      region.field,
      field('Page size', select('limit', PAGE_SIZES.map(String), String(limit))),
    ],
    'Show',
    (v) =>
      v.board === boardId
        ? go({ period: v.period, category: v.category, region: v.region, limit: v.limit, offset: 0 })
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
        h(
          'span',
          {},
          page.total === 0
            ? 'no entries'
            : `ranks ${offset + 1}–${Math.min(offset + limit, page.total)} of ${page.total}`,
        ),
        button('Next', () => go({ offset: offset + limit }), { disabled: offset + limit >= page.total }),
        button('Last', () => go({ offset: last }), { disabled: offset >= last }),
        form(
          { 'aria-label': 'Go to rank', class: 'inline' },
          [field('Go to rank', input('rank', { size: 8, inputmode: 'numeric' }))],
          'Go',
          ({ rank }) => {
            const n = Number.parseInt(rank, 10);
            go({ offset: Number.isFinite(n) && n > 0 ? Math.floor((n - 1) / limit) * limit : 0 });
          },
        ),
      ),
      entriesTable(page.entries, 'Standings', query.member),
    );
  });

  const memberPanel = panel('Find a member', async () => {
    const finder = form(
      { 'aria-label': 'Find a member', class: 'inline' },
      [field('Member id', input('member', { value: query.member ?? '' }))],
      'Find',
      ({ member }) =>
        // A found member's league bucket replaces the one browsed before.
        go({ member: member.trim(), bucket: undefined }),
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
      standing.rank !== null
        ? button('Show their page of the standings', () =>
            go({ offset: Math.floor((standing.rank - 1) / limit) * limit }),
          )
        : null,
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
          holder.replaceChildren(
            h('p', { class: 'scope' }, scopeLine(body)),
            entriesTable(body.entries, 'Live top 10'),
          );
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
    h(
      'p',
      {},
      link(`#/boards/${seg(boardId)}/edit`, 'Edit board'),
      ' · ',
      link(`#/periods/${seg(boardId)}`, 'Periods'),
    ),
    scopeForm,
    h(
      'div',
      { class: 'columns' },
      h('div', {}, pagePanel),
      h('div', {}, memberPanel, board.league ? leaguePanel(board, scope, query, go, signal) : null, livePanel),
    ),
  );
}

/**
 * The "Region" picker of a scope: "world", then the regions ranked in the period
 * (`GET /v1/boards/{id}/regions`), so only a region scope the API knows can be asked for; a
 * region named in the URL stays selected even where the period lists it no more. `load(period)`
 * lists another period's regions, keeping the region selected when it is still there. A
 * refused list leaves "world" and says why beside the picker.
 */
export async function regionPicker(boardId, period, selected, signal) {
  const control = h('select', { name: 'region' });
  const problem = h('small', { hidden: true });
  const el = field('Region', control);
  el.append(problem);
  let asked = 0;
  const load = async (forPeriod) => {
    const ask = ++asked;
    const keep = control.value || selected;
    let regions = [];
    let refusal = null;
    try {
      ({ regions } = await api('GET', `/v1/boards/${seg(boardId)}/regions`, { query: { period: forPeriod }, signal }));
    } catch (err) {
      refusal = err;
    }
    // A later pick of the period got its answer first: this one is stale.
    if (ask !== asked) return;
    const values = ['world', ...regions];
    if (keep && !values.includes(keep)) values.push(keep);
    control.replaceChildren(...values.map((v) => h('option', { value: v, selected: v === keep }, v)));
    problem.replaceChildren(refusal ? `regions not listed: ${refusal.message}` : '');
    problem.hidden = !refusal;
  };
  await load(period);
  return { field: el, load };
}

export const memberFacts = (s) =>
  facts([
    ['Rank', s.rank === null ? 'not ranked' : String(s.rank)],
    ['Score', s.score === null ? '—' : String(s.score)],
    ['Of', String(s.total)],
    // The API's rounded share ("top 67%") reads at a glance; its raw fraction did not.
    ['Top', s.topPercent === null ? '—' : `Top ${s.topPercent}%`],
  ]);

/**
 * League buckets (docs/design/leagues.md), browsed by tier and bucket number. The API lists no buckets and
 * counting them would mean reading a whole tier (tens of thousands of buckets at 1,000,000
 * members), so the operator names or steps to one: each view is one bucket read. Buckets fill
 * in order, so an empty bucket has no later ones to step to (one whose every member was
 * excluded reads as empty too; the number can still be typed).
 */
function leaguePanel(board, scope, query, go, signal) {
  const { tiers, startTier } = board.league;
  return panel('League buckets', async () => {
    const bucket = query.bucket || (query.member ? null : `${startTier}-1`);
    const path = bucket
      ? `/v1/boards/${seg(board.id)}/league/${seg(bucket)}`
      : `/v1/boards/${seg(board.id)}/standings/${seg(query.member)}/league`;
    const picker = (tier, number) =>
      form(
        { 'aria-label': 'League bucket', class: 'inline' },
        [
          field('Tier', select('tier', tiers, tier)),
          field('Bucket number', input('number', { value: number, size: 6, inputmode: 'numeric' })),
        ],
        'Show bucket',
        ({ tier: t, number: n }) => go({ bucket: `${t}-${String(n).trim()}` }),
      );
    let league;
    try {
      league = await api('GET', path, { query: { period: scope.period }, signal });
    } catch (err) {
      // The picker stays, holding what was asked for, beside the API's refusal.
      const [, t, n] = /^(.*)-([^-]*)$/.exec(bucket ?? '') ?? [];
      return h('div', {}, picker(tiers.includes(t) ? t : startTier, n ?? '1'), errorBox(err));
    }
    const shown = league.bucket ?? bucket;
    const number = shown ? bucketNumber(shown) : null;
    const tier = league.tier;
    const step = (n) => go({ bucket: `${tier}-${n}` });
    return h(
      'div',
      {},
      picker(tier, number ?? 1),
      number === null
        ? null
        : h(
            'div',
            { class: 'pager' },
            button('Previous bucket', () => step(number - 1), { disabled: number <= 1 }),
            h('span', {}, `bucket ${shown}`),
            button('Next bucket', () => step(number + 1), { disabled: league.total === 0 }),
          ),
      h(
        'p',
        { class: 'scope' },
        `${league.bucket ?? `${query.member} is not placed yet in ${tier}`} · period ${league.period.key} (${league.period.state}) · ${league.total} ranked · top ${league.promote} promote${
          tier === tiers[tiers.length - 1] ? ' (top tier: none)' : ''
        }, bottom ${league.relegate} relegate${tier === tiers[0] ? ' (lowest tier: none)' : ''}`,
      ),
      league.rank !== null
        ? h('p', {}, `${query.member}: rank ${league.rank} of ${league.total} in ${league.bucket}`)
        : null,
      leagueTable(league.entries, query.member),
    );
  });
}

/** `silver-12` → 12: a bucket is its tier and its place in the tier's fill order. */
const bucketNumber = (bucket) => Number(/-(\d+)$/.exec(bucket)?.[1] ?? 1);

export const zoneCell = (zone) => (zone ? h('span', { class: `zone zone-${zone}` }, zone) : '');

const leagueTable = (entries, highlight) =>
  table(
    ['Rank', 'Member', 'Name', 'Score', 'Zone'],
    entries.map((e) => [
      String(e.rank),
      e.member === highlight ? h('mark', {}, memberLink(e.member)) : memberLink(e.member),
      e.displayName,
      String(e.score),
      zoneCell(e.zone),
    ]),
    { label: 'League bucket', empty: 'No one in this bucket.' },
  );
