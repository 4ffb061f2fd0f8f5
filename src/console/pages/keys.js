import { api, seg, tabList } from '../api.js';
import { field, form, h, input, notice, select, table, time } from '../dom.js';

// The API lists no keys (create, shown once; revoke by id): this tab remembers
// the ids and names of the keys it created, never the keys themselves.
const createdKeys = tabList('keys', 50);
const created = createdKeys.all;
const remember = createdKeys.save;

export function keysPage() {
  const shown = h('div', {});
  const listed = h('div', {});
  const minted = h('div', {});
  const revokeRow = (k) =>
    k.revokedAt
      ? `revoked ${time(k.revokedAt)}`
      : form({ 'aria-label': `Revoke ${k.name}`, class: 'inline' }, [], 'Revoke', async () => {
          await revoke(k.id);
          refreshList();
        });
  refreshList();
  return h(
    'div',
    {},
    h('h1', {}, 'API keys'),
    form(
      { 'aria-label': 'Create a key', class: 'inline' },
      [
        field('Name', input('name', { required: true })),
        field('Role', select('role', ['read', 'ingest', 'metrics', 'admin'], 'read')),
      ],
      'Create key',
      async (v, el) => {
        const k = await api('POST', '/v1/admin/keys', { body: { name: v.name, role: v.role } });
        remember([{ id: k.id, name: k.name, role: k.role, createdAt: k.createdAt, revokedAt: null }, ...created()]);
        el.reset();
        shown.replaceChildren(
          h(
            'div',
            { class: 'card once', role: 'status' },
            h('p', {}, `Key "${k.name}" (${k.role}) created. Copy it now: it is shown once and cannot be read again.`),
            h('output', { class: 'secret', 'aria-label': 'New key' }, k.key),
            h('p', {}, `Id: ${k.id}`),
          ),
        );
        refreshList();
      },
    ),
    shown,
    h('h2', {}, 'Player tokens'),
    h(
      'p',
      {},
      'Game clients read their own rank with a player token, not a key: a game server mints one per player ' +
        '(POST /v1/player-tokens with an ingest key), signed with PLAYER_TOKEN_SECRET. A token reads every read ' +
        "route, and of the member routes only its own member's; each member has its own budget and stream cap. " +
        'Mint one here to try a client as that player.',
    ),
    form(
      { 'aria-label': 'Mint a player token', class: 'inline' },
      [
        field('Member', input('member', { required: true })),
        field('Lifetime (s)', input('ttlSeconds', { value: '3600', size: 6, inputmode: 'numeric' })),
      ],
      'Mint token',
      async (v) => {
        const t = await api('POST', '/v1/player-tokens', {
          body: { member: v.member.trim(), ttlSeconds: Number(v.ttlSeconds) },
        });
        minted.replaceChildren(
          h(
            'div',
            { class: 'card once', role: 'status' },
            h('p', {}, `Player token for "${t.member}", valid until ${time(t.expiresAt)}.`),
            h('output', { class: 'secret', 'aria-label': 'New player token' }, t.token),
          ),
        );
      },
    ),
    minted,
    h('h2', {}, 'Created from this tab'),
    listed,
    h('h2', {}, 'Revoke a key by id'),
    form(
      { 'aria-label': 'Revoke a key by id', class: 'inline' },
      [field('Key id', input('id', { size: 40 }))],
      'Revoke',
      async ({ id }, el) => {
        await revoke(id.trim());
        el.reset();
        el.after(notice(`Key ${id.trim()} revoked.`));
        refreshList();
      },
    ),
  );

  function refreshList() {
    listed.replaceChildren(list());
  }
  function list() {
    return table(
      ['Name', 'Role', 'Id', 'Created', ''],
      created().map((k) => [k.name, k.role, k.id, time(k.createdAt), revokeRow(k)]),
      { label: 'Created keys', empty: 'None yet.' },
    );
  }
}

async function revoke(id) {
  await api('DELETE', `/v1/admin/keys/${seg(id)}`);
  remember(created().map((k) => (k.id === id ? { ...k, revokedAt: new Date().toISOString() } : k)));
}
