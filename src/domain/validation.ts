import type { ZodError } from 'zod';
import { InvalidInput, type ErrorDetail } from './errors.js';

/** Longest text from a request an answer echoes: a client's own field names come back, not a megabyte of them. */
const MAX_ECHOED_CHARS = 64;

/** Text from a request (a field name, say) as an answer shows it: cut short, marked with an ellipsis. */
export function echoed(text: string): string {
  return text.length > MAX_ECHOED_CHARS ? `${text.slice(0, MAX_ECHOED_CHARS)}…` : text;
}

export function zodDetails(
  error: ZodError,
  index?: number,
  pathPrefix: readonly (string | number)[] = [],
): ErrorDetail[] {
  const at = (path: readonly PropertyKey[], message: string): ErrorDetail => {
    const joined = [...pathPrefix, ...path].map(String).join('.') || '(root)';
    return index === undefined ? { path: joined, message } : { index, path: joined, message };
  };
  // An unknown field is named by its own path, so a client sees which one to drop.
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => at([...issue.path, echoed(key)], 'unknown field'))
      : [at(issue.path, issue.message)],
  );
}

/** Parses with a zod schema or throws InvalidInput naming every field at fault. */
export function parseOrThrow<T>(
  schema: { safeParse(data: unknown): { success: true; data: T } | { success: false; error: ZodError } },
  data: unknown,
  what: string,
): T {
  const result = schema.safeParse(data);
  if (!result.success) throw new InvalidInput(`invalid ${what}`, zodDetails(result.error));
  return result.data;
}
