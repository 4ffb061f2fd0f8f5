import { afterAll, describe, expect, it } from 'vitest';
import { startDeployment, ADMIN_KEY, type Deployment } from '../support/deployment.js';
import type { LaurelProcess } from '../support/laurel-process.js';
import { openSse } from '../support/sse-client.js';

/**
 * A normal start, some ordinary work (a board, scores, a live stream) and a SIGTERM stop
 * write nothing at warn level or above: operators alert on those, so they must mean a real
 * failure. Every line says its level by name and its time in ISO 8601.
 */

const SERIOUS = new Set(['warn', 'error', 'fatal']);
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A board, a score, a live stream that sees it, then SIGTERM to every process while the stream is open. */
async function normalRunAndStop(d: Deployment): Promise<void> {
  expect((await d.api('PUT', '/v1/boards/quiet', { aggregation: 'sum' })).status).toBe(201);
  // Open across the stop: the web side subscribes to the period's change notices for it.
  const stream = await openSse(`${d.baseUrl}/v1/boards/quiet/standings/stream`, ADMIN_KEY);
  expect(stream.status).toBe(200);
  await stream.next();
  const posted = await d.api('POST', '/v1/events', {
    events: [{ board: 'quiet', member: 'a', value: 5, idempotencyKey: 'q1' }],
  });
  expect(posted.status).toBe(202);
  // The projection reaches the stream through a notice: every part is running.
  await stream.nextMatching((m) => JSON.stringify(m.data).includes('"a"'));
  const processes = [...d.webs, ...d.workers];
  expect(await Promise.all(processes.map((p) => p.stop('SIGTERM')))).toEqual(processes.map(() => 0));
  stream.close();
}

function expectQuietLogs(p: LaurelProcess): void {
  const lines = p.logs.filter((l) => l.msg !== 'process exited');
  expect(
    lines.some((l) => l.msg === 'stopped'),
    `${p.name} said stopped`,
  ).toBe(true);
  expect(
    lines.filter((l) => SERIOUS.has(l.level)),
    `${p.name} warned`,
  ).toEqual([]);
  for (const line of lines) {
    expect(line.level, JSON.stringify(line)).toMatch(/^(trace|debug|info|warn|error|fatal)$/);
    expect(line.time, JSON.stringify(line)).toMatch(ISO_TIME);
  }
  // What the process wrote to stderr (a Node warning, a stray console.error) counts too.
  expect(p.logs.find((l) => l.msg === 'process exited')?.stderr, `${p.name} stderr`).toBe('');
}

const deployments: Deployment[] = [];
afterAll(async () => {
  for (const d of deployments) await d.close();
});

describe.each([
  { layout: 'a web and a worker process (npm run web, npm run worker)', options: { webs: 1, workers: 1 } },
  { layout: 'one all-in-one process (npm start, what npm run up runs)', options: { allInOne: true } },
])('$layout', ({ options }) => {
  it('start, work and SIGTERM log nothing at warn or above; every line has a level name and an ISO time', async () => {
    const d = await startDeployment(options);
    deployments.push(d);
    await normalRunAndStop(d);
    for (const p of [...d.webs, ...d.workers]) expectQuietLogs(p);
  });
});
