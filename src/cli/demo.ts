import { createLaurelClient, LaurelError } from '../../clients/typescript/src/index.js';
import type { AppContext } from '../context.js';

const REGIONS = ['FR', 'DE', 'US', 'BR', 'JP', 'KR'];
const SUMMARY_EVERY_MS = 5000;
const SERVERS = ['eu-west-1', 'eu-central-2', 'us-east-1', 'ap-north-1'];
const BOARDS = [
  {
    id: 'demo-weekly-kills',
    def: {
      displayName: 'Weekly frags',
      aggregation: 'sum',
      period: 'week',
      categories: ['ranked', 'casual'],
      regions: true,
    },
  },
  {
    id: 'demo-monthly-best',
    def: { displayName: 'Best match score', aggregation: 'best', period: 'month', tieBreak: 'first', regions: true },
  },
  {
    id: 'demo-daily-race',
    def: {
      displayName: 'Daily time trial',
      aggregation: 'best',
      order: 'asc',
      decimals: 3,
      period: 'day',
      tieBreak: 'first',
    },
  },
] as const;

/**
 * Demo data through the public API of a running Laurel: boards, 500 players with regions
 * and follows, then several "game servers" posting batches until `seconds` have passed.
 */
export async function runDemo(
  ctx: AppContext,
  options: { url: string; seconds: number; log: (line: string) => void },
): Promise<number> {
  const laurel = createLaurelClient({ baseUrl: options.url, apiKey: ctx.env.ADMIN_API_KEY });
  for (const b of BOARDS) {
    await laurel.putBoard({
      params: { path: { boardId: b.id } },
      body: { ...b.def, categories: 'categories' in b.def ? [...b.def.categories] : [] },
    });
  }
  const players = Array.from({ length: 500 }, (_, i) => `player-${String(i).padStart(3, '0')}`);
  for (const [i, p] of players.entries()) {
    const path = { memberId: p };
    await laurel.putMember({
      params: { path },
      body: { displayName: `Player ${i}`, region: REGIONS[i % REGIONS.length]! },
    });
    const memberIds = [players[(i * 7 + 1) % 500]!, players[(i * 13 + 5) % 500]!, players[(i + 250) % 500]!];
    await laurel.putFollowing({ params: { path }, body: { memberIds } });
  }
  // The hint comes as soon as there is something to read (not after the stream, minutes later),
  // and must work as printed: with a read key made for it, not the admin key.
  const res = await fetch(`${options.url}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.env.ADMIN_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'demo reader', role: 'read' }),
  });
  const readKey = res.ok ? ((await res.json()) as { key: string }).key : '<a read key>';
  options.log(
    `demo: ${BOARDS.length} boards and ${players.length} players ready; streaming events for ${options.seconds}s; try:`,
  );
  options.log(
    `  curl -H 'Authorization: Bearer ${readKey}' '${options.url}/v1/boards/demo-weekly-kills/standings?limit=10'`,
  );
  let sent = 0;
  let seq = 0;
  const until = Date.now() + options.seconds * 1000;
  const skill = (p: number) => 1 + (p % 10); // some players are simply better
  // A short progress line every few seconds; the server's own log lines stay in its terminal.
  const started = Date.now();
  let reported = started;
  while (Date.now() < until) {
    if (Date.now() - reported >= SUMMARY_EVERY_MS) {
      reported = Date.now();
      const seconds = (reported - started) / 1000;
      options.log(
        `demo: ${sent} events sent in ${Math.round(seconds)}s (${Math.round(sent / seconds)}/s); ${Math.round((until - reported) / 1000)}s to go`,
      );
    }
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
            member: players[p]!,
            value,
            idempotencyKey: `demo-${server}-${Date.now()}-${seq}`,
            source: server,
            ...(board.id === 'demo-weekly-kills' ? { category: Math.random() < 0.6 ? 'ranked' : 'casual' } : {}),
          };
        });
        // The client retries 503s and timeouts with the same keys; what still fails is skipped.
        const accepted = await laurel.postEvents({ body: { events } }).catch((err: unknown) => {
          if (err instanceof LaurelError || err instanceof Error)
            options.log(`demo: a batch from ${server} failed: ${err.message}`);
          return null;
        });
        if (accepted) sent += events.length;
      }),
    );
    await new Promise((r) => setTimeout(r, 250));
  }
  options.log(`demo: sent ${sent} events`);
  return sent;
}
