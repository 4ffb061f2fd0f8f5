import { api, onUnauthorized, session } from './api.js';
import { errorBox, field, form, h, input } from './dom.js';
import { boardsPage, boardFormPage } from './pages/boards.js';
import { standingsPage } from './pages/standings.js';
import { memberPage, membersPage } from './pages/members.js';
import { periodsPage, resultsPage } from './pages/periods.js';
import { rebuildPage, rebuildsPage } from './pages/rebuilds.js';
import { keysPage } from './pages/keys.js';

/** @typedef {{ params: Array<string | undefined>, query: Record<string, string>, signal: AbortSignal, navigate: typeof navigate }} PageContext */

// Hash routes: the server only ever serves the one page, and a reload stays where it was.
/** @type {Array<[RegExp, (ctx: PageContext) => Element | Promise<Element>]>} */
const ROUTES = [
  [/^\/boards$/, boardsPage],
  [/^\/boards\/new$/, (ctx) => boardFormPage(ctx, null)],
  [/^\/boards\/([^/]+)\/edit$/, (ctx) => boardFormPage(ctx, ctx.params[0])],
  [/^\/standings(?:\/([^/]+))?$/, standingsPage],
  [/^\/members$/, membersPage],
  [/^\/members\/([^/]+)$/, memberPage],
  [/^\/periods(?:\/([^/]+))?$/, periodsPage],
  [/^\/periods\/([^/]+)\/([^/]+)$/, resultsPage],
  [/^\/rebuilds$/, rebuildsPage],
  [/^\/rebuilds\/([^/]+)$/, rebuildPage],
  [/^\/keys$/, keysPage],
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let current = null;
let loginMessage = null;

/** Goes to a route; `query` becomes the hash's query string (empty values left out). */
export function navigate(path, query = {}) {
  const params = new URLSearchParams(
    Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''),
  );
  const search = params.toString();
  const next = `#${path}${search ? `?${search}` : ''}`;
  // The same route asked for again (Find with the same member, say) loads it afresh.
  if (location.hash === next) void render();
  else location.hash = next;
}

function loginPage() {
  const key = input('key', { type: 'password', autocomplete: 'off', required: true });
  const el = h(
    'section',
    { class: 'login' },
    h('h1', {}, 'Log in'),
    h('p', {}, 'Enter an admin API key. It is kept in this tab only and sent with each call to the API.'),
    loginMessage ? errorBox(loginMessage) : null,
    form({ 'aria-label': 'Log in' }, [field('Admin key', key)], 'Log in', async ({ key: candidate }) => {
      const now = new Date().toISOString();
      // An admin-only call that reads nothing: a wrong key is a 401, a non-admin key a 403.
      await api('GET', '/v1/admin/stats', { key: candidate, query: { from: now, to: now } });
      session.set(candidate);
      loginMessage = null;
      if (!location.hash || location.hash === '#/login') location.hash = '#/boards';
      else void render();
    }),
  );
  queueMicrotask(() => key.focus());
  return el;
}

async function render() {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const loggedIn = session.key() !== null;
  nav.hidden = !loggedIn;
  if (!loggedIn) {
    document.title = 'Log in · Laurel console';
    main.replaceChildren(loginPage());
    return;
  }
  const hash = location.hash.slice(1) || '/boards';
  const [path, search = ''] = hash.split('?');
  const route = ROUTES.find(([pattern]) => pattern.test(path));
  if (!route) return navigate('/boards');
  const params = route[0]
    .exec(path)
    .slice(1)
    .map((p) => (p === undefined ? undefined : decodeURIComponent(p)));
  for (const a of nav.querySelectorAll('a[href^="#/"]')) {
    a.toggleAttribute('aria-current', path.startsWith(a.getAttribute('href').slice(1)));
  }
  main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
  try {
    const page = await route[1]({
      params,
      query: Object.fromEntries(new URLSearchParams(search)),
      signal: controller.signal,
      navigate,
    });
    if (controller.signal.aborted) return;
    main.replaceChildren(page);
    const heading = page.querySelector('h1');
    document.title = `${heading ? heading.textContent : 'Laurel'} · Laurel console`;
  } catch (err) {
    if (controller.signal.aborted) return;
    main.replaceChildren(errorBox(err));
  }
}

onUnauthorized((err) => {
  session.clear();
  loginMessage = err;
  void render();
});

document.getElementById('logout').addEventListener('click', () => {
  session.clear();
  loginMessage = null;
  location.hash = '#/login';
  void render();
});
window.addEventListener('hashchange', () => void render());
void render();
