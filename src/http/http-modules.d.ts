declare module 'type-is' {
  import type { IncomingMessage } from 'node:http';
  /** The first of `types` the request's Content-Type matches, false if none, null without a body. */
  function typeis(req: IncomingMessage, types: readonly string[]): string | false | null;
  export = typeis;
}
