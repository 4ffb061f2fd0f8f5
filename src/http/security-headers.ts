import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * The headers a helmet middleware sets. They depend on nothing in the request (no nonces),
 * so they are taken once at start and every answer gets them as one block, instead of a
 * dozen middleware calls per request.
 */
function headersOf(middleware: Middleware): ReadonlyArray<readonly [string, string]> {
  const headers: Array<readonly [string, string]> = [];
  const res = {
    setHeader: (name: string, value: unknown) => void headers.push([name, String(value)]),
    removeHeader: () => undefined,
    getHeader: () => undefined,
  };
  // helmet checks its options when it is created; its middleware only sets headers.
  middleware({ headers: {} } as IncomingMessage, res as unknown as ServerResponse, () => undefined);
  return headers;
}

/**
 * Standard security headers (helmet) on every answer. The API serves only JSON, so its
 * content security policy allows nothing at all.
 */
export const API_HEADERS = headersOf(
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  }),
);

/**
 * The two HTML pages (Swagger UI at /docs, Bull Board) replace that policy with helmet's
 * default one, which lets their own scripts, styles and images load and nothing foreign run.
 * Without `upgrade-insecure-requests`: behind plain HTTP (an internal admin network, say) it
 * would make browsers fetch the pages' own scripts over https and fail.
 */
export const htmlPageHeaders = helmet.contentSecurityPolicy({ directives: { upgradeInsecureRequests: null } });

/**
 * The console runs its own scripts and stylesheet and talks to its own origin only: nothing
 * inline, nothing from elsewhere, no plugins, no framing, forms posting nowhere else.
 */
export const consolePageHeaders = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});
