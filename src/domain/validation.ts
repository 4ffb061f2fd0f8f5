import type { ZodError } from 'zod';
import { InvalidInput, type ErrorDetail } from './errors.js';

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
      ? issue.keys.map((key) => at([...issue.path, key], 'unknown field'))
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
