/**
 * The floors for bench/run.ts: a server answering GET /<n> with one ZRANK of the n-th bench
 * member, as JSON, and nothing else (no auth, validation, logging or metrics). With
 * BARE_FRAMEWORK=express it is a minimal Express 5 app doing the same: the framework's own
 * cost; otherwise bare node:http: what any Node HTTP service pays before its own work.
 * Env: BARE_PORT, BARE_REDIS_URL, BARE_KEY, BARE_ENTRIES (comma-separated sorted-set entries).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import { Redis } from 'ioredis';

const redis = new Redis(process.env.BARE_REDIS_URL!);
const key = process.env.BARE_KEY!;
const entries = process.env.BARE_ENTRIES!.split(',');

function answer(n: number, res: ServerResponse): void {
  redis.zrank(key, entries[n % entries.length]!).then(
    (rank) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ rank: rank === null ? null : rank + 1 }));
    },
    () => res.writeHead(503).end(),
  );
}

let handler: (req: IncomingMessage, res: ServerResponse) => void;
if (process.env.BARE_FRAMEWORK === 'express') {
  const app = express();
  app.get('/:n', (req, res) => answer(Number(req.params.n), res));
  handler = app;
} else {
  handler = (req, res) => answer(Number(req.url!.slice(1)), res);
}
const server = createServer(handler);
server.listen(Number(process.env.BARE_PORT));
process.on('SIGTERM', () => {
  server.close();
  redis.disconnect();
  process.exit(0);
});
