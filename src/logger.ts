import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths that may carry secrets; pino replaces them before anything is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'apiKey',
  'key',
  'token',
  'secret',
  '*.apiKey',
  '*.secret',
  '*.token',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: { service: 'laurel' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  // JSON lines say their level by name and their time in ISO 8601 (UTC), so log stores and
  // people read them without pino's numeric levels or epoch milliseconds.
  const json: pino.LoggerOptions = {
    ...options,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (destination) return pino(json, destination as pino.DestinationStream);
  // People read a terminal; machines read everything else (containers, files, pipes) as JSON lines.
  if (process.stdout.isTTY)
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' },
      },
    });
  return pino(json);
}
