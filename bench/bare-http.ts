/**
 * The HTTP floor for bench/run.ts: a bare node:http server answering GET /<n> with one
 * ZRANK of the n-th bench member, as JSON. No framework, no auth, no logging: what any Node
 * HTTP service pays before its own work. Env: BARE_PORT, BARE_REDIS_URL, BARE_KEY,
 * BARE_ENTRIES (comma-separated sorted-set entries).
 */
import { createServer } from 'node:http';
import { Redis } from 'ioredis';

const redis = new Redis(process.env.BARE_REDIS_URL!);
const key = process.env.BARE_KEY!;
const entries = process.env.BARE_ENTRIES!.split(',');
const server = createServer((req, res) => {
  const entry = entries[Number(req.url!.slice(1)) % entries.length]!;
  redis.zrank(key, entry).then(
    (rank) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ rank: rank === null ? null : rank + 1 }));
    },
    () => res.writeHead(503).end(),
  );
});
server.listen(Number(process.env.BARE_PORT));
process.on('SIGTERM', () => {
  server.close();
  redis.disconnect();
  process.exit(0);
});
