/**
 * The raw limit of a rebuild, run by bench/run.ts as its own process (so its peak RSS is its
 * own): a cursor out of Postgres and pipelined ZADDs into a plain key, nothing else.
 * Env: RAW_DATABASE_URL, RAW_REDIS_URL, RAW_BOARD, RAW_KEY. Prints {"seconds": n} on stdout.
 */
import pg from 'pg';
import Cursor from 'pg-cursor';
import { Redis } from 'ioredis';

const client = new pg.Client({ connectionString: process.env.RAW_DATABASE_URL });
const redis = new Redis(process.env.RAW_REDIS_URL!);
const key = process.env.RAW_KEY!;
await client.connect();
const started = performance.now();
const cursor = client.query(
  new Cursor('SELECT member_id, value FROM member_aggregates WHERE board_id = $1 ORDER BY member_id', [
    process.env.RAW_BOARD,
  ]),
);
for (;;) {
  const rows = await cursor.read(5000);
  if (rows.length === 0) break;
  const p = redis.pipeline();
  for (const r of rows) p.zadd(key, -Number(r.value), r.member_id);
  await p.exec();
}
const seconds = (performance.now() - started) / 1000;
await cursor.close();
await client.end();
redis.disconnect();
process.stdout.write(`${JSON.stringify({ seconds })}\n`);
