/** Identifier formats from SPEC §2, shared by validation everywhere. */
export const BOARD_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MEMBER_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
export const CATEGORY_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const REGION_CODE = /^[A-Za-z0-9_-]{1,16}$/;
/** Printable ASCII without spaces: safe in logs, URLs, Redis and Postgres text. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;

/** Scope names that can never be a category id or a region code. */
export const ALL_CATEGORIES = 'all';
export const WORLD = 'world';

/**
 * Text Postgres can store and JSON can carry: no NUL character and no lone surrogate.
 * Anything else is refused at the edge with a 400, never discovered by a worker later.
 */
export function isSafeText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/** isSafeText for every string (keys included) inside a JSON value. */
export function isSafeJson(value: unknown): boolean {
  if (typeof value === 'string') return isSafeText(value);
  if (Array.isArray(value)) return value.every(isSafeJson);
  if (value && typeof value === 'object') {
    return Object.entries(value).every(([k, v]) => isSafeText(k) && isSafeJson(v));
  }
  return true;
}

export const UNSAFE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';
