// The console's only way to Laurel: the public API, with the operator's key as a bearer
// header. The key lives in sessionStorage (gone with the tab) and never in a cookie, so no
// other site can make the browser use it.

const KEY = 'laurel.console.key';

export const session = {
  key: () => sessionStorage.getItem(KEY),
  set: (key) => sessionStorage.setItem(KEY, key),
  // Everything the tab remembered goes with the key: the next operator starts afresh.
  clear: () => sessionStorage.clear(),
};

/**
 * A short list the tab keeps of what the API cannot list (the keys and rebuilds it started).
 * @param {string} name
 * @param {number} max
 */
export function tabList(name, max) {
  const key = `laurel.console.${name}`;
  return {
    /** @returns {any[]} */
    all: () => JSON.parse(sessionStorage.getItem(key) ?? '[]'),
    /** @param {any[]} list */
    save: (list) => sessionStorage.setItem(key, JSON.stringify(list.slice(0, max))),
  };
}

/** A refusal or failure as the API worded it: `{ error, message, details? }`. */
export class ApiError extends Error {
  constructor(status, body) {
    const known = body !== null && typeof body === 'object' && typeof body.message === 'string';
    super(known ? body.message : `Laurel answered HTTP ${status}`);
    this.status = status;
    this.code = known ? body.error : null;
    this.details = known && Array.isArray(body.details) ? body.details : [];
  }
}

/** @type {(error: ApiError) => void} */
let unauthorizedHandler = () => {};
/**
 * What happens when a call is refused with 401 (the key was revoked, say): back to the login.
 * @param {(error: ApiError) => void} handler
 */
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

function urlOf(path, query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/**
 * @typedef {object} CallOptions
 * @property {unknown} [body] sent as JSON
 * @property {Record<string, unknown>} [query] empty values are left out
 * @property {string | null} [key] the session's key unless given (the login tries one)
 * @property {AbortSignal} [signal]
 * @property {string} [accept]
 */

/**
 * @param {string} method
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<Response>}
 */
async function send(method, path, { body, query, key = session.key(), signal, accept } = {}) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (accept) headers.accept = accept;
  let res;
  try {
    res = await fetch(urlOf(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError(0, { error: 'network', message: `Laurel could not be reached (${err.message})` });
  }
  if (res.ok) return res;
  const text = await res.text();
  let parsed = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a proxy's HTML page, say: the status is all there is to show
  }
  const error = new ApiError(res.status, parsed);
  if (res.status === 401 && key === session.key()) unauthorizedHandler(error);
  throw error;
}

/**
 * Calls the API; resolves to the parsed answer (null for 204), rejects with an ApiError.
 * @param {string} method
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<any>}
 */
export async function api(method, path, options = {}) {
  const res = await send(method, path, options);
  if (res.status === 204) return null;
  return res.json();
}

/** `encodeURIComponent` for a path segment (member ids may hold `:` and `@`). */
export const seg = (value) => encodeURIComponent(value);

/**
 * Reads a Server-Sent Events stream with the bearer header (EventSource cannot send one),
 * calling `onMessage(event, data)` for each message, reconnecting a second after a drop,
 * until `signal` aborts or the server sends `closed`.
 */
export async function followStream(path, query, signal, onMessage, onError) {
  while (!signal.aborted) {
    try {
      const res = await send('GET', path, { query, signal, accept: 'text/event-stream' });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n?/g, '\n');
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const message = parseMessage(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (!message) continue;
          onMessage(message.event, message.data);
          if (message.event === 'closed') return;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      onError(err);
      if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function parseMessage(block) {
  let event = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length === 0 ? null : { event, data: data.join('\n') };
}
