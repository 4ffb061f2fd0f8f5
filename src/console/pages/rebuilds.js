import { api, seg, tabList } from '../api.js';
import { errorBox, facts, field, form, h, input, link, select, table, time } from '../dom.js';

// The API has no list of rebuilds; this tab remembers the ones it started.
const startedRebuilds = tabList('rebuilds', 20);

export async function rebuildsPage({ navigate }) {
  const { boards } = await api('GET', '/v1/boards');
  return h(
    'div',
    {},
    h('h1', {}, 'Rebuilds'),
    form(
      { 'aria-label': 'Start a rebuild' },
      [
        field('Board', select('board', [['', 'every board'], ...boards.map((b) => b.id)], '')),
        field('Period', input('period', { placeholder: 'every open period' }), 'a period key, or current'),
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', name: 'fromEvents' }),
          ' Recompute from the events ledger first',
        ),
      ],
      'Start rebuild',
      async (v) => {
        const body = { fromEvents: v.fromEvents === 'on' };
        if (v.board) body.board = v.board;
        if (v.period.trim()) body.period = v.period.trim();
        const { rebuildId } = await api('POST', '/v1/admin/rebuilds', { body });
        startedRebuilds.save([
          { rebuildId, board: v.board || null, at: new Date().toISOString() },
          ...startedRebuilds.all(),
        ]);
        navigate(`/rebuilds/${seg(rebuildId)}`);
      },
    ),
    h('h2', {}, 'Started from this tab'),
    table(
      ['Rebuild', 'Board', 'Started'],
      startedRebuilds
        .all()
        .map((r) => [link(`#/rebuilds/${seg(r.rebuildId)}`, r.rebuildId), r.board ?? 'every board', time(r.at)]),
      {
        label: 'Rebuilds started',
        empty: 'None yet.',
      },
    ),
  );
}

const FINAL = new Set(['completed', 'failed']);

/** A rebuild's progress, read again every second until it finishes or the page is left. */
export async function rebuildPage({ params, signal }) {
  const id = params[0];
  const read = () => api('GET', `/v1/admin/rebuilds/${seg(id)}`, { signal });
  let last = await read();
  const body = h('div', {}, view(last));
  const problem = h('div', {});
  void (async () => {
    while (!FINAL.has(last.state) && !signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (signal.aborted) return;
      try {
        last = await read();
        body.replaceChildren(view(last));
        problem.replaceChildren();
      } catch (err) {
        // A failed read (Redis down, say) is shown and tried again a second later.
        if (!signal.aborted) problem.replaceChildren(errorBox(err));
      }
    }
  })();
  return h('div', {}, h('h1', {}, `Rebuild ${id}`), h('p', {}, link('#/rebuilds', 'Rebuilds')), problem, body);
}

function view(r) {
  return h(
    'div',
    {},
    facts([
      ['State', r.state],
      ['Board', r.request.board ?? 'every board'],
      ['Period', r.request.period ?? 'every open period'],
      ['From events', r.request.fromEvents ? 'yes' : 'no'],
      ['Trigger', r.request.trigger],
      [
        'Progress',
        `${r.progress.done} of ${r.progress.total} scopes (${r.progress.percent}%)${r.progress.failed ? `, ${r.progress.failed} failed` : ''}`,
      ],
      ['Started', time(r.startedAt)],
      ['Finished', r.finishedAt ? time(r.finishedAt) : 'not yet'],
      ['Duration', r.durationMs === null ? null : `${r.durationMs} ms`],
    ]),
    h('progress', { max: 100, value: r.progress.percent, 'aria-label': 'Rebuild progress' }),
    table(
      ['Board', 'Period', 'Category', 'Members', 'Duration', 'Recomputed'],
      r.scopes.map((s) => [
        s.board,
        s.period,
        s.category,
        String(s.members),
        `${s.durationMs} ms`,
        s.recomputed ? 'yes' : 'no',
      ]),
      { label: 'Rebuilt scopes', empty: 'No scope finished yet.' },
    ),
  );
}
