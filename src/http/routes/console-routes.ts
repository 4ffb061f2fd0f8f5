import { fileURLToPath } from 'node:url';
import express, { type IRouter } from 'express';
import { consolePageHeaders } from '../security-headers.js';

/** Where the operators' console (docs/operations.md, Console) is served. */
export const CONSOLE_PATH = '/console';

// Beside this module's folder in src/ and, copied by `npm run build`, in dist/src/.
const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/**
 * The console's page, scripts and stylesheet, as static files. They hold no data, so they
 * need no key; the data comes from the public API, each call carrying the operator's key
 * like any other client's. Laurel's `no-store` stays: a deploy is seen at the next load.
 */
export function consoleRoutes(router: IRouter): void {
  router.use(
    CONSOLE_PATH,
    consolePageHeaders,
    express.static(CONSOLE_DIR, { cacheControl: false, dotfiles: 'ignore', index: 'index.html' }),
  );
}
