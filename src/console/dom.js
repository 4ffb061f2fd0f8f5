// DOM building for every page. Text always goes in as text nodes, never as markup, so
// nothing an API answer holds (member ids, display names, reasons) can become HTML.

/**
 * An element with attributes, listeners (`onclick`) and children; strings and numbers
 * become text, null/false/undefined are left out, arrays are flattened.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in el) el.value = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

let controls = 0;
/**
 * A labelled control. The label names the control through `for`, not by wrapping it, so its
 * accessible name is the label alone (a wrapped select would add its chosen option).
 */
export function field(label, control, hint) {
  control.id ||= `c${++controls}`;
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint ? h('small', {}, hint) : null,
  );
}

export function input(name, props = {}) {
  return h('input', { name, type: 'text', ...props });
}

export function select(name, options, selected, props = {}) {
  return h(
    'select',
    { name, ...props },
    options.map((option) => {
      const [value, text] = Array.isArray(option) ? option : [option, option];
      return h('option', { value, selected: String(value) === String(selected ?? '') }, text);
    }),
  );
}

/** The "Board" picker of the pages that work on one board at a time. */
export function boardField(boards, selected) {
  return field(
    'Board',
    select(
      'board',
      boards.map((b) => b.id),
      selected,
    ),
  );
}

export function button(text, onclick, props = {}) {
  return h('button', { type: 'button', onclick, ...props }, text);
}

/**
 * A form whose submit runs `action(values)`; while it runs the form is disabled, and its
 * failure (the API's message and the fields it names) is shown above the buttons.
 */
export function form(props, fields, submitText, action) {
  const errors = h('div', { class: 'form-errors' });
  const submit = h('button', { type: 'submit' }, submitText);
  const el = h('form', { ...props, novalidate: true }, fields, errors, h('div', { class: 'actions' }, submit));
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.replaceChildren();
    submit.disabled = true;
    try {
      await action(Object.fromEntries(new FormData(el)), el);
    } catch (err) {
      errors.replaceChildren(errorBox(err));
    } finally {
      submit.disabled = false;
    }
  });
  return el;
}

/** The API's message, and the fields a 400 names (`path: message`, with the batch index if any). */
export function errorBox(err) {
  const details = err.details ?? [];
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('strong', {}, err.status ? `${err.status} ` : '', err.message),
    details.length
      ? h(
          'ul',
          {},
          details.map((d) =>
            h('li', {}, d.index !== undefined ? `[${d.index}] ` : '', d.path ? `${d.path}: ` : '', d.message),
          ),
        )
      : null,
  );
}

export function notice(text) {
  return h('div', { class: 'notice', role: 'status' }, text);
}

/** A table (in a scrolling box); each row is an array of cells (text or nodes). */
export function table(headers, rows, props = {}) {
  if (rows.length === 0) return h('p', { class: 'empty' }, props.empty ?? 'Nothing to show.');
  // A wide table scrolls inside its card instead of widening the page past the window.
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { 'aria-label': props.label },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((text) => h('th', { scope: 'col' }, text)),
        ),
      ),
      h('tbody', {}, rows.map(tableRow)),
    ),
  );
}

export const tableRow = (cells) =>
  h(
    'tr',
    {},
    cells.map((cell) => h('td', {}, cell ?? '—')),
  );

/** Definition list of [term, value] pairs. */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value ?? '—')]),
  );
}

export const link = (href, text) => h('a', { href }, text);

export const time = (iso) =>
  iso
    ? new Date(iso)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '—';

/**
 * A titled part of a page that loads by itself: its failure shows the API's message in
 * place and leaves the rest of the page working. `load(refresh)` returns its content.
 */
export function panel(title, load) {
  const body = h('div', { class: 'panel-body' }, h('p', { class: 'loading' }, 'Loading…'));
  const el = h('section', { class: 'panel', 'aria-label': title }, h('h2', {}, title), body);
  const refresh = async () => {
    try {
      body.replaceChildren(await load(refresh));
    } catch (err) {
      body.replaceChildren(errorBox(err));
    }
  };
  void refresh();
  return el;
}
