import { createParser } from 'eventsource-parser';

export interface SseMessage {
  event: string;
  data: any;
}

/**
 * A Server-Sent Events client over fetch, read with a spec-conforming parser: every
 * message and comment (keepalives) in order, and whether the server ended the stream.
 */
export interface SseClient {
  status: number;
  contentType: string | null;
  /** An answer that is not an event stream (an error): its JSON body; null for a stream. */
  body: unknown;
  messages: SseMessage[];
  comments: string[];
  /** The next message not yet taken (in arrival order), waiting for it if needed. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Takes messages until one matches and returns it. */
  nextMatching(match: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves once a comment matching arrives (past or future). */
  comment(match: (text: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, key: string | null): Promise<SseClient> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    signal: controller.signal,
  });
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  let cursor = 0;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const parser = createParser({
    onEvent: (e) => {
      messages.push({ event: e.event ?? 'message', data: JSON.parse(e.data) });
      notify();
    },
    onComment: (text) => {
      comments.push(text.trim());
      notify();
    },
  });
  let done = false;
  const contentType = res.headers.get('content-type');
  const isStream = contentType?.startsWith('text/event-stream') ?? false;
  const text = isStream ? '' : await res.text();
  const ended = (async () => {
    if (!res.body || !isStream) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // aborted by close()
    }
    done = true;
    notify();
  })();
  const waitFor = async <T>(take: () => T | undefined, what: string, timeoutMs: number): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = take();
      if (got !== undefined) return got;
      if (done) throw new Error(`stream ended while waiting for ${what}; got ${JSON.stringify(messages.slice(-5))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(messages.slice(-5))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  };
  const client: SseClient = {
    status: res.status,
    contentType,
    body: text ? JSON.parse(text) : null,
    messages,
    comments,
    next: (timeoutMs = 15_000) =>
      waitFor(() => (cursor < messages.length ? messages[cursor++] : undefined), 'message', timeoutMs),
    async nextMatching(match, timeoutMs = 15_000) {
      return waitFor(
        () => {
          while (cursor < messages.length) {
            const m = messages[cursor++]!;
            if (match(m)) return m;
          }
          return undefined;
        },
        'matching message',
        timeoutMs,
      );
    },
    comment: (match, timeoutMs = 15_000) => waitFor(() => comments.find(match), 'comment', timeoutMs),
    ended,
    close: () => controller.abort(),
  };
  return client;
}
