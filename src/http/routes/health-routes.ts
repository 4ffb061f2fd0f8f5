import type { IRouter } from 'express';
import type { Readiness } from '../../health/readiness.js';

export function healthRoutes(router: IRouter, readiness: Readiness): void {
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const report = await readiness.report();
    res.status(report.ready ? 200 : 503).json(report.body);
  });
}
