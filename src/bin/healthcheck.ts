// The image's HEALTHCHECK: exits 0 when the process in this container answers /healthz.
// One image runs every role, so the check finds the role by what listens: a web or all-in-one
// process serves PORT (default 3000); a worker-only process serves its probes on METRICS_PORT
// (default 9464) and nothing on PORT, so a refused connection on PORT means a worker. The web
// side never listens on METRICS_PORT, so a web process that stopped listening stays unhealthy.
// A port given as the first argument is probed alone.
async function answers(port: string): Promise<boolean | 'refused'> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch (err) {
    return (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED' ? 'refused' : false;
  }
}

const given = process.argv[2];
let healthy = await answers(given ?? process.env.PORT ?? '3000');
if (healthy === 'refused' && given === undefined) healthy = await answers(process.env.METRICS_PORT ?? '9464');
process.exitCode = healthy === true ? 0 : 1;
