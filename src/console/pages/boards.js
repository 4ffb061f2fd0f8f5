import { api, seg } from '../api.js';
import { facts, field, form, h, input, link, notice, select, table } from '../dom.js';
import { scheduleText } from '../schedule.js';

export async function boardsPage({ query }) {
  const { boards } = await api('GET', '/v1/boards');
  return h(
    'div',
    {},
    h('h1', {}, 'Boards'),
    query.saved ? notice(`Board ${query.saved} saved.`) : null,
    h('p', {}, link('#/boards/new', 'New board')),
    table(
      ['Board', 'Name', 'Aggregation', 'Order', 'Schedule', 'Current period', 'State', ''],
      boards.map((b) => [
        link(`#/standings/${seg(b.id)}`, b.id),
        b.displayName,
        b.aggregation,
        b.order,
        scheduleText(b),
        b.currentPeriod ? b.currentPeriod.key : 'none',
        b.currentPeriod ? b.currentPeriod.state : 'outside window',
        h(
          'span',
          { class: 'row-actions' },
          link(`#/boards/${seg(b.id)}/edit`, 'Edit'),
          link(`#/periods/${seg(b.id)}`, 'Periods'),
        ),
      ]),
      { label: 'Boards', empty: 'No boards yet.' },
    ),
  );
}

// The fields the form has controls for; anything else a board holds (schedules,
// windows, leagues, limits) is edited as JSON beside them, so the form never drops a
// setting it does not know and PUT (which replaces the definition) keeps it.
const FORM_FIELDS = [
  'displayName',
  'aggregation',
  'order',
  'tieBreak',
  'period',
  'timezone',
  'decimals',
  'minValue',
  'maxValue',
  'categories',
  'regions',
  'graceSeconds',
  'awards',
];
const VIEW_ONLY = ['id', 'createdAt', 'updatedAt', 'currentPeriod'];

/** A typed number as a number; anything else as typed, for the API to name the field. */
function numberOrText(text) {
  const trimmed = text.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}
const listOf = (text, item = (s) => s) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(item);

function definitionFrom(values) {
  const body = {
    aggregation: values.aggregation,
    order: values.order,
    tieBreak: values.tieBreak,
    timezone: values.timezone.trim() || undefined,
    categories: listOf(values.categories),
    regions: values.regions === 'on',
    awards: {
      tiers: listOf(values.tiers, numberOrText),
      regionTiers: listOf(values.regionTiers, numberOrText),
      followingTop1: values.followingTop1 === 'on',
    },
    minValue: values.minValue.trim() === '' ? null : numberOrText(values.minValue),
    maxValue: values.maxValue.trim() === '' ? null : numberOrText(values.maxValue),
  };
  if (values.displayName.trim()) body.displayName = values.displayName.trim();
  if (values.period) body.period = values.period;
  if (values.decimals.trim()) body.decimals = numberOrText(values.decimals);
  if (values.graceSeconds.trim()) body.graceSeconds = numberOrText(values.graceSeconds);
  if (values.more.trim()) {
    let more;
    try {
      more = JSON.parse(values.more);
    } catch (err) {
      throw Object.assign(new Error(`More settings is not JSON: ${err.message}`), { details: [] });
    }
    Object.assign(body, more);
  }
  return body;
}

export async function boardFormPage({ navigate }, boardId) {
  const board = boardId ? await api('GET', `/v1/boards/${seg(boardId)}`) : null;
  const v = board ?? {};
  const more = board
    ? Object.fromEntries(Object.entries(board).filter(([k]) => !FORM_FIELDS.includes(k) && !VIEW_ONLY.includes(k)))
    : {};
  if (board && typeof board.period !== 'string') more.period = board.period;
  const awards = v.awards ?? { tiers: [1, 10, 50, 100], regionTiers: [50], followingTop1: true };
  const idField = board
    ? null
    : field(
        'Board id',
        input('id', { required: true, pattern: '[a-z0-9][a-z0-9_-]{0,63}' }),
        'lower case letters, digits, _ and -',
      );
  const fields = [
    idField,
    field(
      'Display name',
      input('displayName', { value: board && v.displayName !== v.id ? v.displayName : '' }),
      'defaults to the id',
    ),
    field('Aggregation', select('aggregation', ['best', 'sum', 'last'], v.aggregation ?? 'best')),
    field(
      'Order',
      select(
        'order',
        [
          ['desc', 'desc (higher is better)'],
          ['asc', 'asc (lower is better)'],
        ],
        v.order ?? 'desc',
      ),
    ),
    field('Tie break', select('tieBreak', ['first', 'last', 'member', 'shared'], v.tieBreak ?? 'first')),
    field(
      'Period',
      select(
        'period',
        [['', '(in More settings)'], 'all', 'day', 'week', 'month'],
        typeof v.period === 'string' ? v.period : board ? '' : 'month',
      ),
    ),
    field('Time zone', input('timezone', { value: v.timezone ?? 'UTC' })),
    field('Decimals', input('decimals', { value: v.decimals ?? 0, inputmode: 'numeric' })),
    field('Minimum value', input('minValue', { value: v.minValue ?? '' }), 'empty: none'),
    field('Maximum value', input('maxValue', { value: v.maxValue ?? '' }), 'empty: none'),
    field('Categories', input('categories', { value: (v.categories ?? []).join(', ') }), 'comma separated'),
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'checkbox', name: 'regions', checked: v.regions === true }),
      ' Also rank per region',
    ),
    field('Grace seconds', input('graceSeconds', { value: v.graceSeconds ?? 300, inputmode: 'numeric' })),
    field('Award tiers', input('tiers', { value: awards.tiers.join(', ') }), 'top N, comma separated'),
    field('Region award tiers', input('regionTiers', { value: awards.regionTiers.join(', ') })),
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'checkbox', name: 'followingTop1', checked: awards.followingTop1 }),
      ' Award first among followed members',
    ),
    field(
      'More settings (JSON)',
      h('textarea', { name: 'more', rows: 4, value: Object.keys(more).length ? JSON.stringify(more, null, 2) : '' }),
      'schedules, window, league, limits: as the API takes them (docs/api.md)',
    ),
  ];
  return h(
    'div',
    {},
    h('h1', {}, board ? `Edit board ${board.id}` : 'New board'),
    board
      ? facts([
          [
            'Current period',
            board.currentPeriod
              ? `${board.currentPeriod.key} (${board.currentPeriod.state})`
              : 'none: the board is outside its window',
          ],
          ['Schedule', scheduleText(board)],
          ['Created', board.createdAt],
        ])
      : null,
    form(
      { 'aria-label': board ? 'Edit board' : 'New board', class: 'grid' },
      fields,
      board ? 'Save board' : 'Create board',
      async (values) => {
        const id = board ? board.id : values.id.trim();
        if (!id)
          throw Object.assign(new Error('invalid board id'), { details: [{ path: 'boardId', message: 'required' }] });
        const saved = await api('PUT', `/v1/boards/${seg(id)}`, { body: definitionFrom(values) });
        navigate('/boards', { saved: saved.id });
      },
    ),
  );
}
