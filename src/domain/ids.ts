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
