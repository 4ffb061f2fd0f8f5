/**
 * The bench's stream clients, in a process of their own (so their CPU is not the web
 * process's): STREAMS member streams over MEMBERS members of BOARD, opened in waves.
 * Reports over IPC once every stream has its first message, then counts messages until
 * told to stop.
 */
import { Agent, request } from 'node:http';

const base = process.env.BASE_URL!;
const key = process.env.ADMIN_KEY!;
const board = process.env.BOARD!;
const streams = Number(process.env.STREAMS);
const members = Number(process.env.MEMBERS);
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

let firstMessages = 0;
let messages = 0;
let errors = 0;
const sockets: Array<{ destroy(): void }> = [];

function open(i: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(
      `${base}/v1/boards/${board}/standings/m${i % members}/stream?period=all`,
      { agent, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        let first = true;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const n = chunk.split('event: standing').length - 1;
          if (n === 0) return;
          if (first) {
            first = false;
            firstMessages += 1;
            messages += n - 1;
            resolve();
          } else messages += n;
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', () => {
      errors += 1;
      resolve();
    });
    req.end();
    sockets.push(req);
  });
}

const WAVE = 500;
for (let from = 0; from < streams; from += WAVE) {
  await Promise.all(Array.from({ length: Math.min(WAVE, streams - from) }, (_, k) => open(from + k)));
}
process.send!({ type: 'open', firstMessages, errors });
const baseline = messages;
process.on('message', (m: { type: string }) => {
  if (m.type !== 'stop') return;
  process.send!({ type: 'done', messages: messages - baseline, errors });
  for (const s of sockets) s.destroy();
  process.exit(0);
});
