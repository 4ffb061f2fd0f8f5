import { Router } from 'express';
import type { AppContext } from '../../context.js';
import { readiness } from '../../services/readiness.js';

export function healthRoutes(ctx: AppContext): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const { ready, failing, checks } = await readiness(ctx);
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'unavailable',
      ...(ready ? {} : { failing }),
      checks,
    });
  });
  return router;
}
