import type { Request } from 'express';

/** A named path parameter as one string (Express 5 types allow arrays for wildcards). */
export function param(req: Request, name: string): string {
  const value = req.params[name];
  return Array.isArray(value) ? value.join('/') : (value ?? '');
}
