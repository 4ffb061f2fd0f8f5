// The image's HEALTHCHECK: exits 0 when the process in this container answers /healthz.
// The port is the first argument, else PORT (web), else 3000; a worker passes METRICS_PORT.
const port = process.argv[2] ?? process.env.PORT ?? '3000';
try {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
  process.exitCode = res.ok ? 0 : 1;
} catch {
  process.exitCode = 1;
}
