import type { AppContext } from '../context.js';

const REGIONS = ['FR', 'DE', 'US', 'BR', 'JP', 'KR'];
const SERVERS = ['eu-west-1', 'eu-central-2', 'us-east-1', 'ap-north-1'];
const BOARDS = [
  { id: 'demo-weekly-kills', def: { displayName: 'Weekly frags', aggregation: 'sum', period: 'week', categories: ['ranked', 'casual'], regions: true } },
  { id: 'demo-monthly-best', def: { displayName: 'Best match score', aggregation: 'best', period: 'month', tieBreak: 'first', regions: true } },
  { id: 'demo-daily-race', def: { displayName: 'Daily time trial', aggregation: 'best', order: 'asc', decimals: 3, period: 'day', tieBreak: 'first' } },
];

interface Sender {
  (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

/**
 * Demo data through the public API of a running Laurel: boards, 500 players with regions
 * and follows, then several "game servers" posting batches until `seconds` have passed.
 */
export async function runDemo(ctx: AppContext, options: { url: string; seconds: number; log: (line: string) => void }): Promise<number> {
  const send: Sender = async (method, path, body) => {
    const res = await fetch(options.url + path, {
      method,
      headers: { authorization: `Bearer ${ctx.env.ADMIN_API_KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  for (const b of BOARDS) {
    const res = await send('PUT', `/v1/boards/${b.id}`, b.def);
    if (res.status >= 300) throw new Error(`could not create ${b.id}: ${JSON.stringify(res.body)}`);
  }
  const players = Array.from({ length: 500 }, (_, i) => `player-${String(i).padStart(3, '0')}`);
  for (const [i, p] of players.entries()) {
    await send('PUT', `/v1/members/${p}`, { displayName: `Player ${i}`, region: REGIONS[i % REGIONS.length] });
    await send('PUT', `/v1/members/${p}/following`, { memberIds: [players[(i * 7 + 1) % 500], players[(i * 13 + 5) % 500], players[(i + 250) % 500]] });
  }
  options.log(`demo: ${BOARDS.length} boards and ${players.length} players ready; streaming events for ${options.seconds}s`);
  let sent = 0;
  let seq = 0;
  const until = Date.now() + options.seconds * 1000;
  const skill = (p: number) => 1 + (p % 10); // some players are simply better
  while (Date.now() < until) {
    await Promise.all(
      SERVERS.map(async (server) => {
        const events = Array.from({ length: 50 }, () => {
          const p = Math.floor(Math.random() * players.length);
          const board = BOARDS[seq % BOARDS.length]!;
          seq += 1;
          const value =
            board.id === 'demo-daily-race'
              ? Math.round((90 - skill(p) * 3 + Math.random() * 20) * 1000) / 1000
              : Math.floor(Math.random() * 10 * skill(p));
          return {
            board: board.id,
            member: players[p],
            value,
            idempotencyKey: `demo-${server}-${Date.now()}-${seq}`,
            source: server,
            ...(board.id === 'demo-weekly-kills' ? { category: Math.random() < 0.6 ? 'ranked' : 'casual' } : {}),
          };
        });
        const res = await send('POST', '/v1/events', { events });
        if (res.status === 202) sent += events.length;
      }),
    );
    await new Promise((r) => setTimeout(r, 250));
  }
  options.log(`demo: sent ${sent} events; try GET ${options.url}/v1/boards/demo-weekly-kills/standings`);
  return sent;
}
