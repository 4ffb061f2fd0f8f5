/** Identifier formats (docs/api.md), shared by validation everywhere. */
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

/**
 * isSafeText for every string (keys included) inside a JSON value. Iterative, so that a
 * hostile nesting depth cannot overflow the stack.
 */
export function isSafeJson(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (!isSafeText(item)) return false;
    } else if (Array.isArray(item)) {
      // Not push(...item): spreading a wide array (200k elements fit in a body) overflows the stack.
      for (const element of item) pending.push(element);
    } else if (item && typeof item === 'object') {
      for (const [k, v] of Object.entries(item)) {
        if (!isSafeText(k)) return false;
        pending.push(v);
      }
    }
  }
  return true;
}

/** How deeply arrays and objects nest in a JSON value (a scalar is 0), counted without recursion. */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item && typeof item === 'object') {
      deepest = Math.max(deepest, depth + 1);
      for (const child of Object.values(item)) pending.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** Keys JavaScript gives a meaning of their own: parsed, `__proto__` would vanish from the object. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The first key inside a JSON value (as JSON.parse made it) that names the prototype, if
 * any. Such a key would be dropped or misread on the way in, so that two different
 * payloads hash alike; it is refused instead.
 */
export function prototypeKeyIn(value: unknown): string | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (Array.isArray(item)) {
      for (const element of item) pending.push(element);
    } else if (item && typeof item === 'object') {
      for (const key of Object.keys(item)) {
        if (PROTOTYPE_KEYS.has(key)) return key;
        pending.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return undefined;
}

export const UNSAFE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';
