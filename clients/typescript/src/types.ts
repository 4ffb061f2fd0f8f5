import type { MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './schema.js';

/** The request options of an operation: path and query parameters, body. */
export type Init<P extends keyof paths, M extends keyof paths[P]> = MaybeOptionalInit<paths[P], M & keyof paths[P]>;

type Success = 200 | 201 | 202 | 204;

/** The body of an operation's successful answer (undefined for a 204). */
export type Ok<Op> = Op extends { responses: infer R }
  ? {
      [S in keyof R]: S extends Success
        ? R[S] extends { content: { 'application/json': infer B } }
          ? B
          : R[S] extends { content: { 'text/plain': infer T } }
            ? T
            : undefined
        : never;
    }[keyof R]
  : never;

export type Send = <T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>) => Promise<T>;
