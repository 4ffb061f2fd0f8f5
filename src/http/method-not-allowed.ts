import type { Express, RequestHandler } from 'express';
import { NotFound } from '../domain/errors.js';
import { HttpError } from './errors.js';

interface Layer {
  route?: { methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  match(path: string): boolean;
}

/**
 * The last handler: a path Laurel serves asked with another method is a 405 naming the
 * methods it has (`Allow`), anything else a 404. Reads the routes from the app's router, so
 * the answer cannot disagree with what is mounted.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  const methodsFor = (path: string): string[] => {
    const found = new Set<string>();
    const walk = (stack: readonly Layer[]) => {
      for (const layer of stack) {
        if (layer.route) {
          if (layer.match(path)) for (const m of Object.keys(layer.route.methods)) found.add(m.toUpperCase());
        } else if (layer.handle?.stack) {
          walk(layer.handle.stack);
        }
      }
    };
    walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
    if (found.has('GET')) found.add('HEAD');
    return [...found].sort();
  };
  return (req, _res, next) => {
    const allowed = methodsFor(req.path);
    if (allowed.length === 0) return next(new NotFound(`no route for ${req.method} ${req.path}`));
    next(notAllowed(req.path, req.method, allowed));
  };
}

/** The 405 for a path that answers only `allowed`. */
function notAllowed(path: string, method: string, allowed: readonly string[]): HttpError {
  return new HttpError(405, 'method_not_allowed', `${path} answers ${allowed.join(', ')}, not ${method}`, undefined, {
    Allow: allowed.join(', '),
  });
}
