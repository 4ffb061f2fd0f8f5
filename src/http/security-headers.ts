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
 */
export const htmlPageHeaders = helmet.contentSecurityPolicy();
