import { z } from 'zod';
import { scopeQuerySchema } from '../standings-service.js';

/** The top stream's query: scope as for standings, and how many entries (1–50, 10 by default; docs/api.md). */
export const topStreamQuerySchema = scopeQuerySchema.extend({
  limit: z.coerce.number().int().min(1).max(50).default(10),
});
