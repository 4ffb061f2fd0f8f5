import { z } from 'zod';
import { scopeQuerySchema } from '../standings-service.js';

/** The top stream's query: scope as for standings, and how many entries (SPEC §9.5: 1–50, 10 by default). */
export const topStreamQuerySchema = scopeQuerySchema.extend({ limit: z.coerce.number().int().min(1).max(50).default(10) });
