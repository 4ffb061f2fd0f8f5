import type { RequestHandler } from 'express';
import { takesBody } from './auth.js';
import { HttpError } from './errors.js';

const JSON_TYPE = /^application\/(.+\+)?json\s*(;|$)/i;

/** Bull Board actions whose body is job data: without a JSON body they are refused. */
const TAKES_JOB_DATA = /\/api\/queues\/[^/]+\/(add|[^/]+\/update-data)$/;

/**
 * Bull Board is logged in to with basic auth, which browsers resend on their own: a page on
 * any site could post to it with the admin's login. Its writes are therefore off unless
 * BULL_BOARD_WRITE=true, and even then refused when a browser says they come from another
 * site (Sec-Fetch-Site, Origin) or carry a body that is not JSON (the only bodies a foreign
 * page can send without a CORS preflight are text, form and multipart).
 *
 * A write without any content type passes only with an Origin naming this host: Bull Board's
 * own page sends its actions (pause, retry, clean, promote...) as body-less PUTs without one,
 * and browsers send Origin on every write, same-origin ones included. Any other client, or a
 * browser that sends no Origin, states a JSON content type.
 */
export function guardBullBoardWrites(allowWrites: boolean): RequestHandler {
  return (req, _res, next) => {
    if (!takesBody(req.method)) return next();
    if (!allowWrites) {
      throw new HttpError(
        403,
        'forbidden',
        'Bull Board is read-only: set BULL_BOARD_WRITE=true to retry, add or remove jobs from it',
      );
    }
    const site = req.get('sec-fetch-site');
    const origin = req.get('origin');
    if (
      (site !== undefined && site !== 'same-origin' && site !== 'none') ||
      (origin !== undefined && !sameHost(origin, req.get('host')))
    ) {
      throw new HttpError(403, 'forbidden', 'Bull Board refuses writes from another site');
    }
    const type = req.get('content-type');
    if (
      (type !== undefined && !JSON_TYPE.test(type)) ||
      (type === undefined && (origin === undefined || TAKES_JOB_DATA.test(req.path)))
    ) {
      throw new HttpError(
        415,
        'unsupported_media_type',
        'Bull Board writes take a JSON body: send Content-Type: application/json',
      );
    }
    next();
  };
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}
