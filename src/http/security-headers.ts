import helmet from 'helmet';

/**
 * Standard security headers (helmet) on every answer. The API serves only JSON, so its
 * content security policy allows nothing at all.
 */
export const apiHeaders = helmet({
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
});

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
