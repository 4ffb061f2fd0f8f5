import { api, seg } from '../api.js';
import { button, errorBox, field, form, h, input, link, notice, select, table, time, boardField } from '../dom.js';
import { entriesTable, regionPicker, scopeLine } from './standings.js';

export async function periodsPage({ params, navigate, signal }) {
  const { boards } = await api('GET', '/v1/boards');
  const boardId = params[0] ?? boards[0]?.id;
  const picker = form(
    { 'aria-label': 'Pick a board', class: 'inline' },
    [boardField(boards, boardId)],
    'Show',
    ({ board }) => navigate(`/periods/${seg(board)}`),
  );
  if (!boardId) return h('div', {}, h('h1', {}, 'Periods'), h('p', { class: 'empty' }, 'No boards yet.'));
  const listPath = `/v1/boards/${seg(boardId)}/periods`;
  const listed = h('div', {});
  const status = h('div', {});
  /** Reads the periods again and redraws the table; resolves to the periods read. */
  const refresh = async () => {
    const { periods } = await api('GET', listPath, { signal });
    listed.replaceChildren(periodsTable(boardId, periods, closer.open));
    return periods;
  };
  // The close runs in the worker after the 202: the table is read again until it says so.
  const followClose = async (key) => {
    for (;;) {
      const periods = await refresh();
      const state = periods.find((p) => p.key === key)?.state ?? 'unknown';
      status.replaceChildren(notice(`Close of ${key} asked: the period is ${state}.`));
      if (state === 'closed' || signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  const shown = (promise) => promise.catch((err) => status.replaceChildren(errorBox(err)));
  const closer = closeDialog(boardId, {
    closed: (key) => void shown(followClose(key)),
    // The table was stale (another operator, or the tick, got there first): show what is now.
    refused: () => void shown(refresh()),
  });
  await refresh();
  return h('div', {}, h('h1', {}, `Periods of ${boardId}`), picker, status, listed, closer.dialog);
}

function periodsTable(boardId, periods, askClose) {
  const now = Date.now();
  return table(
    ['Period', 'Starts', 'Ends', 'State', '', ''],
    periods.map((p) => [
      p.key,
      time(p.startsAt),
      time(p.endsAt),
      p.state,
      p.state === 'closed'
        ? link(`#/periods/${seg(boardId)}/${seg(p.key)}`, 'Results and awards')
        : link(`#/standings/${seg(boardId)}?period=${seg(p.key)}`, 'Standings'),
      // Only an open period that has begun can be closed now; the API refuses the rest with 409.
      p.state === 'open' && Date.parse(p.startsAt) <= now
        ? button('Close now', () => askClose(p.key), { class: 'danger' })
        : '',
    ]),
    { label: 'Periods', empty: 'No periods yet: a period starts with its first event.' },
  );
}

/**
 * The one confirmation dialog of the page, opened for a period: a reason, and the period key
 * typed again, as an erasure asks for the member id, since a close cannot be undone.
 */
function closeDialog(boardId, { closed, refused }) {
  let key = null;
  const heading = h('h2', {});
  const reason = input('reason', { size: 40, autocomplete: 'off' });
  const confirm = input('confirm', { size: 20, autocomplete: 'off' });
  const dialog = h('dialog', {});
  const closeForm = form(
    { 'aria-label': 'Close period now', class: 'danger' },
    [field('Reason', reason), field('Type the period key to confirm', confirm)],
    'Close period',
    async ({ reason: text, confirm: typed }) => {
      if (typed !== key)
        throw Object.assign(new Error('type the period key exactly to confirm the close'), { details: [] });
      const asked = key;
      try {
        await api('POST', `/v1/boards/${seg(boardId)}/periods/${seg(asked)}/close`, { body: { reason: text } });
      } catch (err) {
        if (err.status === 409) refused();
        throw err;
      }
      hide();
      closed(asked);
    },
  );
  // The confirmation's label names the key asked for, so it is set each time the dialog opens.
  const confirmLabel = closeForm.querySelector(`label[for="${confirm.id}"]`);
  const hide = () => dialog.close();
  // However it closes (Cancel, Escape, a close asked), the next opening starts blank.
  dialog.addEventListener('close', () => {
    reason.value = '';
    confirm.value = '';
    closeForm.querySelector('.form-errors').replaceChildren();
  });
  dialog.append(
    heading,
    h(
      'p',
      {},
      'The period ends now, without grace, and is closed: final standings, awards and reports. It cannot be undone.',
    ),
    closeForm,
    h('div', { class: 'actions' }, button('Cancel', hide)),
  );
  return {
    dialog,
    open: (periodKey) => {
      key = periodKey;
      dialog.setAttribute('aria-label', `Close period ${periodKey}`);
      heading.textContent = `Close ${periodKey} of ${boardId} now?`;
      confirmLabel.textContent = `Type ${periodKey} to confirm`;
      dialog.showModal();
    },
  };
}

const PAGE = 100;

/** A closed period's final standings and awards, a page at a time; reports are the members' notifications. */
export async function resultsPage({ params, query, navigate, signal }) {
  const [boardId, key] = params;
  const scope = { category: query.category || 'all', region: query.region || 'world' };
  const [board, region] = await Promise.all([
    api('GET', `/v1/boards/${seg(boardId)}`),
    regionPicker(boardId, key, scope.region, signal),
  ]);
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
      [field('Category', select('category', ['all', ...board.categories], scope.category)), region.field],
      'Show',
      (v) => go({ category: v.category, region: v.region, offset: 0 }),
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
