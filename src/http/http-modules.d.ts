declare module 'fresh' {
  /** Whether a conditional GET may be answered 304 (If-None-Match / If-Modified-Since against the answer's). */
  function fresh(requestHeaders: Record<string, string | string[] | undefined>, responseHeaders: { etag?: unknown; 'last-modified'?: unknown }): boolean;
  export = fresh;
}

declare module 'type-is' {
  import type { IncomingMessage } from 'node:http';
  /** The first of `types` the request's Content-Type matches, false if none, null without a body. */
  function typeis(req: IncomingMessage, types: readonly string[]): string | false | null;
  export = typeis;
}
